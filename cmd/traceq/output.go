package main

import (
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/render/chart"
)

// inputPaths lists the files the command's arguments name (a directory
// stands for its trace files), for checking outputs against them.
func inputPaths(args []string) []string {
	set, err := parse.Expand(args)
	if err != nil {
		return args
	}
	return append(set.Files(), args...)
}

// refuseInputs is a usage error when an output path is one of the inputs
// (the same file: a symlink or hard link counts), so that no output ever
// overwrites or appends to an input.
func refuseInputs(cmd, flag, out string, inputs []string) error {
	if same, ok := outfile.SameFile(out, inputs); ok {
		return usagef("%s: %s %s is an input; write the output elsewhere", cmd, flag, outfile.Describe(out, same))
	}
	return nil
}

// imageFormat decides the format of a chart written to path: --format when
// given, else the file's extension; the two must agree, and an extension
// must be one of the formats ("-", standard output, takes --format or svg).
func imageFormat(c *cli.Context, flag, path string) (string, error) {
	format := c.String("format")
	if !slices.Contains(chart.Formats, format) {
		return "", usagef("%s: unknown --format %q (want svg or png)", c.Command.Name, format)
	}
	if path == "-" {
		return format, nil
	}
	ext, err := extensionFormat(c.Command.Name, flag, path)
	if err != nil {
		return "", usagef("%v (or - for standard output)", err)
	}
	if c.IsSet("format") && format != ext {
		return "", usagef("%s: --format %s but %s %s is a .%s file", c.Command.Name, format, flag, path, ext)
	}
	return ext, nil
}

// extensionFormat is the chart format of a file name: its extension,
// which must be .svg or .png.
func extensionFormat(cmd, flag, path string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if !slices.Contains(chart.Formats, ext) {
		return "", usagef("%s: %s %s: want a .svg or .png file name", cmd, flag, path)
	}
	return ext, nil
}

// writeFile writes what write writes to path atomically, or to standard
// output for "-".
func writeFile(e *env, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(e.stdout)
	}
	return outfile.WriteWith(path, write)
}
