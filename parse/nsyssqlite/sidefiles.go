package nsyssqlite

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
)

// Open reads the file with immutable=1: SQLite then takes no lock and
// writes nothing (no -shm, no journal rollback), so reading works on
// read-only media and while nsys or a viewer holds the file. But an
// immutable read also ignores the -wal and -journal files next to the
// database: committed rows still in a -wal would be missed, and pages a
// writer put in the file before its transaction committed would be read.
// Reading those correctly would mean writing next to the input (a -shm
// index, a rollback), so Open refuses them, and checks afterwards that
// nothing changed while it read.

// walHeaderSize is the size of a WAL file's header; frames follow it. A
// -wal no longer than that holds no changes.
const walHeaderSize = 32

// journalMagic starts the header of a rollback journal that still matters:
// a committed journal in PERSIST mode has its header zeroed, in TRUNCATE
// mode it is empty, in DELETE mode it is gone.
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

const settleHint = "once no program uses it, `sqlite3 FILE 'SELECT 1 FROM sqlite_master'`"

// checkSideFiles refuses a database whose -wal or -journal file (next to
// path, which has its symbolic links resolved, as SQLite resolves them)
// holds changes.
func checkSideFiles(path string) error {
	if st, err := os.Stat(path + "-wal"); err == nil && (st.Size() > walHeaderSize || !st.Mode().IsRegular()) {
		return &unfinishedError{"its -wal file holds uncheckpointed changes (a program has the export open, or did not close it); " +
			settleHint + " merges them"}
	}
	if f, err := os.Open(path + "-journal"); err == nil {
		hdr := make([]byte, len(journalMagic))
		_, err := io.ReadFull(f, hdr)
		f.Close()
		if err == nil && bytes.Equal(hdr, journalMagic) {
			return &unfinishedError{"a rollback journal (-journal file) lies next to it (a program is writing the export, or crashed while writing it); " +
				settleHint + " rolls it back"}
		}
	}
	return nil
}

// fileState is what changes when a database file is written: its size and
// time, and the change counter in its header, which every transaction
// that commits in rollback mode increments (on file systems with coarse
// times, two writes in one tick leave the time as it was).
type fileState struct {
	info    os.FileInfo
	counter uint32
}

func statFile(path string) (fileState, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileState{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileState{}, err
	}
	var hdr [28]byte
	s := fileState{info: st}
	if _, err := f.ReadAt(hdr[:], 0); err == nil {
		s.counter = binary.BigEndian.Uint32(hdr[24:])
	}
	return s, nil
}

func (s fileState) same(o fileState) bool {
	return os.SameFile(s.info, o.info) && s.info.Size() == o.info.Size() &&
		s.info.ModTime().Equal(o.info.ModTime()) && s.counter == o.counter
}

var errChanged = &unfinishedError{"the file changed while traceq read it (a program is writing it); retry when it is done"}
