package nsyssqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirState is the names and contents of the files in a directory.
func dirState(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func sameState(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func fileNames(m map[string][]byte) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// snapshot copies the export and the side files named by suffixes, as
// they are now, into a fresh directory: the state a crash would leave.
func snapshot(t *testing.T, path string, suffixes ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, s := range append([]string{""}, suffixes...) {
		b, err := os.ReadFile(path + s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "x.sqlite"+s), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "x.sqlite")
}

// wantUnfinished opens path, expects ErrUnfinishedWrite with want in its
// one-line message, and checks that nothing in the directory changed.
func wantUnfinished(t *testing.T, path, want string) {
	t.Helper()
	before := dirState(t, filepath.Dir(path))
	tr, err := Open(path, Options{})
	if err == nil {
		t.Fatalf("Open read %d activities; want ErrUnfinishedWrite", len(tr.Activities))
	}
	msg := err.Error()
	if !errors.Is(err, ErrUnfinishedWrite) || !strings.Contains(msg, want) || strings.Contains(msg, "\n") || strings.Contains(msg, path) {
		t.Errorf("Open = %q; want ErrUnfinishedWrite, one line without the path, containing %q", msg, want)
	}
	if after := dirState(t, filepath.Dir(path)); !sameState(before, after) {
		t.Errorf("Open changed the directory: %v, then %v", fileNames(before), fileNames(after))
	}
}

// conn returns a single connection to path, read-write, closed at the end
// of the test.
func testConn(t *testing.T, dsn string) *sql.Conn {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func exec(t *testing.T, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := c.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

const addKernel = `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1`

// TestWAL: committed rows that are only in the -wal file. immutable=1
// ignored them; reading them would need a -shm file written next to the
// export, so Open refuses, and writes nothing.
func TestWAL(t *testing.T) {
	path := tmpFixture(t)
	w := testConn(t, fileURI(path))
	exec(t, w, `PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`, addKernel)
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() <= walHeaderSize {
		t.Fatalf("no committed frames in the -wal file: %v", err)
	}
	msg := "-wal file holds uncheckpointed changes"
	t.Run("writer open", func(t *testing.T) { wantUnfinished(t, path, msg) })
	t.Run("writer gone, no -shm", func(t *testing.T) { wantUnfinished(t, snapshot(t, path, "-wal"), msg) })
	t.Run("checkpointed", func(t *testing.T) {
		exec(t, w, `PRAGMA wal_checkpoint(TRUNCATE)`)
		tr := mustOpen(t, path, Options{})
		base := mustOpen(t, filepath.Join(fixtureDir, hostileFixture), Options{})
		if len(tr.Activities) != len(base.Activities)+1 {
			t.Errorf("%d activities, want the fixture's %d and the one added", len(tr.Activities), len(base.Activities))
		}
	})
	t.Run("WAL-mode file, closed", func(t *testing.T) {
		p := tmpFixture(t)
		editDB(t, p, `PRAGMA journal_mode=WAL`, addKernel)
		before := dirState(t, filepath.Dir(p))
		if len(before) != 1 {
			t.Fatalf("files %v, want the export alone", fileNames(before))
		}
		mustOpen(t, p, Options{})
		if after := dirState(t, filepath.Dir(p)); !sameState(before, after) {
			t.Errorf("Open changed the directory: %v", fileNames(after))
		}
	})
}

// TestJournal: a rollback journal next to the export means a writer is at
// work or crashed; the file may hold pages of a transaction that never
// committed. immutable=1 read them; Open refuses, and rolls nothing back.
func TestJournal(t *testing.T) {
	path := tmpFixture(t)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := testConn(t, fileURI(path))
	// A transaction bigger than the page cache spills pages into the
	// database file before it commits.
	exec(t, w, `PRAGMA cache_size=2`, `BEGIN`, `UPDATE StringIds SET value = value || '!'`,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1`)
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(cur, orig) {
		t.Fatalf("the transaction did not spill into the database file")
	}
	msg := "rollback journal"
	t.Run("writer in a transaction", func(t *testing.T) { wantUnfinished(t, path, msg) })
	t.Run("hot journal", func(t *testing.T) { wantUnfinished(t, snapshot(t, path, "-journal"), msg) })
	exec(t, w, `ROLLBACK`)
	t.Run("rolled back", func(t *testing.T) { mustOpen(t, path, Options{}) })
	t.Run("persisted journal, committed", func(t *testing.T) {
		p := tmpFixture(t)
		editDB(t, p, `PRAGMA journal_mode=PERSIST`, addKernel)
		if st, err := os.Stat(p + "-journal"); err != nil || st.Size() == 0 {
			t.Fatalf("no persisted journal: %v", err)
		}
		mustOpen(t, p, Options{})
	})
	t.Run("reader holds it open", func(t *testing.T) {
		p := tmpFixture(t)
		r := testConn(t, fileURI(p)+"?mode=ro")
		exec(t, r, `BEGIN`, `SELECT count(*) FROM StringIds`)
		mustOpen(t, p, Options{})
	})
}

// TestChangedWhileRead: a writer that starts after the side-file check
// leaves the file's size or time changed; Open then refuses what it read.
func TestChangedWhileRead(t *testing.T) {
	path := tmpFixture(t)
	edited := false
	_, err := Open(path, Options{Progress: func(done, total int64) {
		if done > 0 && !edited {
			edited = true
			editDB(t, path, addKernel)
		}
	}})
	if !errors.Is(err, ErrUnfinishedWrite) || !strings.Contains(err.Error(), "changed while") {
		t.Errorf("Open = %v, want ErrUnfinishedWrite: changed while it was read", err)
	}
}
