// Command traceq answers where GPU time goes in torch.profiler (Kineto
// Chrome-trace JSON) and Nsight Systems (SQLite export) traces: per device,
// per kernel category, per step, per rank.
//
// The command only wires flags and files to the library packages; see
// README.md and docs/design.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

func main() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) }

// Exit codes.
const (
	exitOK    = 0
	exitInput = 1 // bad input or failure
	exitUsage = 2 // bad flags or arguments
	exitGate  = 3 // diff --fail-if: the after run is slower
)

// gateError is diff --fail-if's failure: each condition the after run
// failed, in a sentence.
type gateError struct{ failed []string }

func (e gateError) Error() string {
	return "--fail-if: the after run is slower: " + strings.Join(e.failed, "; ")
}

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
	// getenv reads the environment (the TRACEQ_* settings).
	getenv func(string) string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, tty: isTerminal(stderr), getenv: os.Getenv}
	app := newApp(e)
	args, err := arrange(app, args)
	if err == nil {
		err = app.Run(args)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "traceq: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ge gateError
	if errors.As(err, &ge) {
		return exitGate
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

// arrange checks the command name and moves flags written after the
// inputs ("traceq kernels t.json --format json") in front of them, where
// the flag parser looks; everything after "--" stays an argument. The
// arguments follow a "--" of their own, so that the flag parser takes
// none of them for a flag (./-x.json before "--", -y.json after it) and
// the "--" the user wrote is not taken for an input.
func arrange(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return args, nil
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		var names []string
		for _, c := range app.Commands {
			names = append(names, c.Name)
		}
		return nil, usagef("unknown command %q (want %s)", args[1], strings.Join(names, ", "))
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			pos = append(pos, rest[i+1:]...)
			i = len(rest)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	return slices.Concat(args[:2], flags, []string{"--"}, pos), nil
}

func newApp(e *env) *cli.App {
	usage := func(c *cli.Context, err error, isSubcommand bool) error { return usageError{err.Error()} }
	cmds := commands(e)
	for _, c := range cmds {
		c.OnUsageError = usage
	}
	return &cli.App{
		Name:            "traceq",
		Usage:           "where GPU time goes in torch.profiler and nsys traces",
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		ExitErrHandler:  func(*cli.Context, error) {},
		HideHelpCommand: true,
		Commands:        cmds,
		OnUsageError:    usage,
	}
}
