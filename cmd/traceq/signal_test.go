//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestMain runs traceq's main instead of the tests when asked to, so that
// tests can run the command as a process of its own (to signal it).
func TestMain(m *testing.M) {
	if os.Getenv("TRACEQ_TEST_MAIN") == "1" {
		// A file size limit stands for a full disk (TestErrorsNameTarget).
		if n, err := strconv.ParseUint(os.Getenv("TRACEQ_TEST_FSIZE"), 10, 64); err == nil {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
		main()
		return
	}
	os.Exit(m.Run())
}

// TestSignalRemovesTemp: SIGINT or SIGTERM while an nsys export is being
// decompressed to a temporary file removes that file, and the exit code
// is 128 + the signal. The export comes through a pipe that stalls
// mid-stream, so the signal lands while the copy is in progress, whatever
// the machine's speed.
func TestSignalRemovesTemp(t *testing.T) {
	export, err := os.ReadFile("../../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	var half bytes.Buffer
	zw := gzip.NewWriter(&half)
	zw.Write(export[:len(export)/2])
	zw.Flush() // what the decompressor can read so far; no end
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(os.Args[0], "kernels", "-")
			cmd.Env = append(os.Environ(), "TRACEQ_TEST_MAIN=1", "TMPDIR="+tmp)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			if _, err := stdin.Write(half.Bytes()); err != nil {
				t.Fatal(err)
			}
			// Wait for the temporary copy to hold what was sent.
			for {
				m, _ := filepath.Glob(filepath.Join(tmp, "traceq-*.sqlite"))
				if len(m) == 1 {
					if st, err := os.Stat(m[0]); err == nil && st.Size() >= int64(len(export)/2) {
						break
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit: %v, want code %d (stderr %q)", err, 128+int(sig), stderr.String())
			}
			if es, _ := os.ReadDir(tmp); len(es) != 0 {
				t.Errorf("left %s in TMPDIR", es[0].Name())
			}
		})
	}
}
