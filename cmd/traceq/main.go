// Command traceq answers where GPU time goes in torch.profiler (Kineto
// Chrome-trace JSON) and Nsight Systems (SQLite export) traces: per device,
// per kernel category, per step, per rank.
//
// The command only wires flags to the library packages; see README.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

func main() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) }

// Exit codes.
const (
	exitOK    = 0
	exitInput = 1 // bad input or failure
	exitUsage = 2 // bad flags or arguments
)

// usageError marks errors in how traceq was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// env carries the process's streams to the commands, so tests can run them
// in process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	tty    bool // stderr is a terminal: show progress
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, tty: isTerminal(stderr)}
	app := newApp(e)
	err := app.Run(args)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "traceq: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCLIUsageError(err) {
		return exitUsage
	}
	return exitInput
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// isCLIUsageError recognises urfave/cli's flag errors, which it returns as
// plain errors.
func isCLIUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined", "flag needs an argument", "invalid value", "Required flag", "No help topic", "invalid boolean"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:            "traceq",
		Usage:           "where GPU time goes in torch.profiler and nsys traces",
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		ExitErrHandler:  func(*cli.Context, error) {},
		HideHelpCommand: true,
		Commands:        commands(e),
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageError{err.Error()}
		},
	}
	return app
}
