package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/render/report"
)

// maxAppendTarget is the largest file report --append adds to: a
// benchmark log is kilobytes to megabytes; anything bigger is not one.
const maxAppendTarget = 256 << 20

func reportCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write a markdown report (tables and charts) to a directory, or append it as a dated section to a benchmark log",
		Description: "--out DIR writes DIR/report.md and the chart files next to it, replacing those of an earlier report.\n" +
			"--append BENCH.md appends one dated section to BENCH.md (created if absent; what is there is never changed):\n" +
			"the run summary, the shares and steps charts, the collectives' and the idle verdicts and a link to the whole report,\n" +
			"which goes with the charts into --out DIR, or by default a new directory next to BENCH.md; --full appends the whole report.\n" +
			"Two runs (two directories, or two files that are not ranks of one run) get a before → after comparison.\n" +
			"Every file is written whole or not at all: a failed run leaves no file behind.",
		ArgsUsage: "INPUT...",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write report.md and the charts to `DIR`"},
			&cli.StringFlag{Name: "append", Usage: "append a dated section to the markdown `FILE`"},
			&cli.BoolFlag{Name: "full", Usage: "with --append: append the whole report, not the short section"},
			&cli.StringFlag{Name: "format", Value: "svg", Usage: "chart format: svg or png"},
			// The date makes appended sections non-deterministic; tests
			// pin it.
			&cli.StringFlag{Name: "date", Hidden: true, EnvVars: []string{"TRACEQ_DATE"}, Usage: "date of the appended section, YYYY-MM-DD (default: today, UTC)"},
			bytesPerTokenFlag, linkFlag, minFindingFlag,
		}, chartFlags()...), inputFlags()...),
		Action: func(c *cli.Context) error {
			out, app := c.String("out"), c.String("append")
			if out == "" && app == "" {
				return usagef("report: give --out DIR, --append FILE, or both")
			}
			if c.Bool("full") && app == "" {
				return usagef("report: --full is for --append (--out always writes the whole report)")
			}
			format := c.String("format")
			if format != "svg" && format != "png" {
				return usagef("report: unknown --format %q (want svg or png)", format)
			}
			if c.Int("top") <= 0 {
				return usagef("report: --top must be > 0")
			}
			stepKind, err := chartStepKind(c)
			if err != nil {
				return err
			}
			date := c.String("date")
			if date == "" {
				date = time.Now().UTC().Format(time.DateOnly)
			} else if _, err := time.Parse(time.DateOnly, date); err != nil {
				return usagef("report: --date %q: want YYYY-MM-DD", date)
			}
			ins := inputPaths(c.Args().Slice())
			if app != "" {
				if err := refuseInputs("report", "the report file", app, ins); err != nil {
					return err
				}
				if err := checkAppendTarget(app); err != nil {
					return err
				}
			}
			a, err := answerOptions(c, e)
			if err != nil {
				return err
			}
			copt := a.coll
			tbl, err := loadInputs(c, e, selection{steps: true})
			if err != nil {
				return err
			}
			opt := report.Options{Filter: stepKind, Top: c.Int("top"), Level: 1,
				BytesPerToken: copt.BytesPerToken, Link: copt.Link, Unattributed: c.Bool("unattributed"),
				Findings: a.findings, Settings: a.set}
			chartDir := out
			if app != "" {
				opt.Level, opt.Date = 2, date
				if out == "" {
					chartDir = freshDir(filepath.Join(filepath.Dir(app), "traceq-"+date+"-"+report.DirName(tbl.Inputs)))
				}
			}
			whole := filepath.Join(chartDir, "report.md")
			if err := refuseInputs("report", "the report file", whole, ins); err != nil {
				return err
			}
			_, replaces := os.Stat(whole)
			set := &outputSet{}
			defer set.abort()
			created, err := outfile.MkdirNew(chartDir)
			if err != nil {
				return err
			}
			set.dir(chartDir, created)
			// Each chart file is written once, whichever document links
			// it; links are relative to the document's directory.
			written := map[string]bool{}
			charts := func(docDir string) report.ChartFunc {
				return func(name string, draw func(io.Writer) error) (string, error) {
					p := filepath.Join(chartDir, name+"."+format)
					if !written[p] {
						if err := refuseInputs("report", "the chart", p, ins); err != nil {
							return "", err
						}
						if err := set.write(p, draw); err != nil {
							return "", err
						}
						written[p] = true
					}
					return relLink(docDir, p), nil
				}
			}
			r := report.New(tbl, opt)
			writeMD := func(path string, md []byte) error {
				return set.write(path, func(w io.Writer) error { _, err := w.Write(md); return err })
			}
			var md bytes.Buffer
			lines := 0
			switch {
			case app == "":
				if _, err := r.Generate(&md, format, charts(chartDir)); err != nil {
					return err
				}
				if err := writeMD(whole, md.Bytes()); err != nil {
					return err
				}
			case c.Bool("full"):
				if _, err := r.Generate(&md, format, charts(filepath.Dir(app))); err != nil {
					return err
				}
			default:
				var all bytes.Buffer
				if _, err := r.AtLevel(1).Generate(&all, format, charts(chartDir)); err != nil {
					return err
				}
				if err := writeMD(whole, all.Bytes()); err != nil {
					return err
				}
				if _, err := r.Section(&md, format, charts(filepath.Dir(app)), relLink(filepath.Dir(app), whole)); err != nil {
					return err
				}
			}
			if app != "" {
				lines = bytes.Count(md.Bytes(), []byte("\n"))
				if err := set.write(app, func(w io.Writer) error { return appendTo(w, app, md.Bytes()) }); err != nil {
					return err
				}
			}
			if err := set.commit(); err != nil {
				return err
			}
			switch {
			case app == "":
				verb := "wrote"
				if replaces == nil {
					verb = "replaced"
				}
				fmt.Fprintf(e.stdout, "%s %s and %d charts in %s\n", verb, whole, len(written), chartDir)
			case c.Bool("full"):
				fmt.Fprintf(e.stdout, "appended the whole report (%d lines) to %s, and %d charts in %s\n", lines, app, len(written), chartDir)
			default:
				fmt.Fprintf(e.stdout, "appended a section (%d lines) to %s; the whole report and %d charts in %s\n", lines, app, len(written), chartDir)
			}
			return nil
		},
	}
}

// relLink is the markdown link from a document in dir to path.
func relLink(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = path
	}
	return filepath.ToSlash(rel)
}

// freshDir returns dir, or dir-2, dir-3… the first that does not exist, so
// a second report the same day does not overwrite the first one's charts.
func freshDir(dir string) string {
	for i := 1; ; i++ {
		p := dir
		if i > 1 {
			p = dir + "-" + strconv.Itoa(i)
		}
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p
		}
	}
}

// checkAppendTarget refuses what report --append must not read whole: a
// device, a FIFO or anything not a regular file, and a file too big to be
// a benchmark log.
func checkAppendTarget(path string) error {
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return usagef("report: --append %s is not a regular file", path)
	}
	if st.Size() > maxAppendTarget {
		return usagef("report: --append %s holds %d MiB: not a benchmark log (the limit is %d MiB)", path, st.Size()>>20, maxAppendTarget>>20)
	}
	return nil
}

// appendTo writes to w what path holds (nothing when absent), a blank line
// and md: the new content of a benchmark log, put in place whole by the
// caller.
func appendTo(w io.Writer, path string, md []byte) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		_, err := w.Write(md)
		return err
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if _, err := io.Copy(w, io.LimitReader(f, size)); err != nil {
		return err
	}
	var sep []byte
	if size > 0 {
		var tail [2]byte
		n, _ := f.ReadAt(tail[:min(2, size)], size-min(2, size))
		switch {
		case n == 2 && tail[0] == '\n' && tail[1] == '\n':
		case n >= 1 && tail[n-1] == '\n':
			sep = []byte("\n")
		default:
			sep = []byte("\n\n")
		}
	}
	_, err = w.Write(append(sep, md...))
	return err
}

// outputSet writes a command's output files as one: each to a temporary
// file next to it, all put in place by commit; abort (deferred) removes the
// temporary files and any directory the command created.
type outputSet struct {
	files   []*outfile.File
	created []string
	done    bool
}

func (s *outputSet) dir(d string, created bool) {
	if created {
		s.created = append(s.created, d)
	}
}

func (s *outputSet) write(path string, write func(io.Writer) error) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	s.files = append(s.files, f)
	if err := write(f); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return err
		}
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

func (s *outputSet) commit() error {
	for _, f := range s.files {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	for _, d := range s.created {
		outfile.Keep(d)
	}
	s.done = true
	return nil
}

func (s *outputSet) abort() {
	if s.done {
		return
	}
	for _, f := range s.files {
		f.Abort()
	}
	for _, d := range s.created {
		outfile.RemoveDir(d)
	}
}
