package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/render/report"
	"github.com/traceq/traceq/window"
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
			bytesPerTokenFlag, linkFlag, minFindingFlag, gpuFlag, gpuSpecFlag, captureFlag,
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
				if out != "" && outfile.SameTarget(app, filepath.Join(out, "report.md")) {
					return usagef("report: --append %s is the report --out writes: append to another file", app)
				}
			}
			a, err := answerOptions(c, e)
			if err != nil {
				return err
			}
			copt := a.coll
			el, err := newEffLoad(c, e, true, false)
			if err != nil {
				return err
			}
			// What the report needs of each model is taken while the
			// loader holds it: the efficiency rows, the timelines.
			timelines := report.NewTimelines(stepKind)
			reduce := func(tbl *window.Table, i int) error {
				if err := el.reduce(tbl, i); err != nil {
					return err
				}
				return timelines.Reduce(tbl, i)
			}
			tbl, err := loadInputs(c, e, selection{steps: true, durations: true, collectives: true, reduce: reduce})
			if err != nil {
				return err
			}
			// One match of the collectives for the speed of light's link
			// time and the report's sections.
			coll := a.collectives(stepKind)
			eff, err := el.result(tbl, coll)
			if err != nil {
				return err
			}
			opt := report.Options{Filter: stepKind, Top: c.Int("top"), Level: 1,
				BytesPerToken: copt.BytesPerToken, Link: copt.Link, Links: copt.Links, Unattributed: c.Bool("unattributed"), Efficiency: eff,
				Findings: a.findings, Settings: a.set, Timelines: timelines, Match: func() *collectives.Table { return coll.of(tbl) }}
			// The report's files, and the section appended to the log,
			// appear together or not at all.
			var files outfile.Group
			defer files.Abort()
			chartDir := out
			if app != "" {
				opt.Level, opt.Date = 2, date
			}
			if out == "" {
				// A directory of its own, so that two appends, even at
				// once, never share one.
				if chartDir, err = files.MkdirNew(filepath.Join(filepath.Dir(app), "traceq-"+date+"-"+report.DirName(tbl.Inputs))); err != nil {
					return err
				}
			} else {
				if err := refuseInputs("report", "the report file", filepath.Join(out, "report.md"), ins); err != nil {
					return err
				}
				if err := files.MkdirAll(out); err != nil {
					return err
				}
			}
			whole := filepath.Join(chartDir, "report.md")
			_, replaces := os.Stat(whole)
			write := func(path string, draw func(io.Writer) error) error {
				w, err := files.Create(path)
				if err != nil {
					return err
				}
				if err := draw(w); err != nil {
					return err
				}
				return w.Close()
			}
			// Each chart file is written once, whichever document links
			// it; links are relative to the document's directory.
			written := map[string]bool{}
			charts := func(docDir string) report.ChartFunc {
				return func(name string, draw func(io.Writer) error) (string, error) {
					p := filepath.Join(chartDir, outfile.ClipName(name)+"."+format)
					if !written[p] {
						if err := refuseInputs("report", "the chart", p, ins); err != nil {
							return "", err
						}
						if app != "" && outfile.SameTarget(app, p) {
							return "", usagef("report: --append %s is a chart of the report: append to another file", app)
						}
						if err := write(p, draw); err != nil {
							return "", err
						}
						written[p] = true
					}
					return relLink(docDir, p), nil
				}
			}
			r := report.New(tbl, opt)
			writeMD := func(path string, md []byte) error {
				return write(path, func(w io.Writer) error { _, err := w.Write(md); return err })
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
				files.Append(app, func(tail []byte) []byte { return appendSection(tail, md.Bytes()) })
			}
			if err := files.Commit(); err != nil {
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

// appendSection is what appending the section md to a log ending in
// tail adds: a blank line between what the log holds and the section.
func appendSection(tail, md []byte) []byte {
	var sep []byte
	switch n := len(tail); {
	case n == 0:
	case n == 2 && tail[0] == '\n' && tail[1] == '\n':
	case tail[n-1] == '\n':
		sep = []byte("\n")
	default:
		sep = []byte("\n\n")
	}
	return append(sep, md...)
}
