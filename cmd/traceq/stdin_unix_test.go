//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSliceStdinSignal: the spool of slice - is removed on SIGINT.
func TestSliceStdinSignal(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(dlrm8, "rank0.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "slice", "--time", "0:1ms", "-o", filepath.Join(tmp, "s.json"), "-")
	cmd.Env = append(os.Environ(), "TRACEQ_TEST_MAIN=1", "TMPDIR="+tmp)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdin.Write(data[:len(data)/2])
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("slice - made no spool in TMPDIR in a minute")
		}
		m, _ := filepath.Glob(filepath.Join(tmp, "traceq-*"))
		if len(m) == 1 {
			if st, err := os.Stat(m[0]); err == nil && st.Size() >= int64(len(data)/2) {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("left %s", es[0].Name())
	}
}
