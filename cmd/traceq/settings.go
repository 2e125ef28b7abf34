package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/settings"
)

// Flags of the deployment's settings (and --min-finding).
var (
	bytesPerTokenFlag = &cli.Int64Flag{Name: "bytes-per-token", Usage: "size collectives without args as `N` bytes × the step's token count (from its marker); e.g. hidden size × 2 for a bf16 all-reduce (default: " +
		settings.BytesPerToken.Env() + ", or bytes_per_token in a " + settings.FileName + ")"}
	linkFlag = &cli.StringFlag{Name: "link", Usage: "compare bus bandwidth with `NAME|GBPS|FILE`: a link (" + collectives.LinkNames() +
		"), GB/s per direction, or an nccl-tests output measured on the machine; for a run over hosts intra=…,inter=… (between hosts: " +
		collectives.NetLinkNames() + ") (default: " + settings.Link.Env() + ", or link in a " + settings.FileName + ")"}
	minFindingFlag = &cli.StringFlag{Name: "min-finding", Value: "1%", Usage: "list findings that save at least `SHARE` of the step (a percent); the others are counted; 0 lists all"}
)

// deployment finds the settings of the command's runs: the flags, else
// TRACEQ_* in the environment, else a traceq.toml in the inputs'
// directories or their parents. Files that disagree are warned about.
func deployment(c *cli.Context, e *env, args []string) (*settings.Settings, error) {
	flags := map[settings.Name]string{}
	for _, n := range settings.Names {
		name := strings.TrimPrefix(n.Flag(), "--")
		if c.IsSet(name) {
			flags[n] = c.String(name)
			if n == settings.BytesPerToken {
				flags[n] = strconv.FormatInt(c.Int64(name), 10)
			}
		}
	}
	var dirs []string
	for _, a := range args {
		if a == "-" {
			dirs = append(dirs, ".")
			continue
		}
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			dirs = append(dirs, a)
		} else {
			dirs = append(dirs, filepath.Dir(a))
		}
	}
	set, conflicts, err := settings.Find(flags, e.getenv, dirs)
	if err != nil {
		return nil, err
	}
	for _, c := range conflicts {
		fmt.Fprintf(e.stderr, "traceq: %s\n", c)
	}
	return set, nil
}

// settingError says what is wrong with a setting's value in the words of
// where it came from: a usage error for a flag or a variable, an input
// error naming the traceq.toml.
func settingError(cmd string, s settings.Setting, err error) error {
	if s.Source == settings.FromFile {
		return fmt.Errorf("%s: %s: %w", s.File, s.Name, err)
	}
	return usagef("%s: %s: %v", cmd, s.From(), err)
}

// collectiveOptions reads the collectives' settings: the bytes per token
// and the link (a name, a bandwidth, or an nccl-tests output file).
func collectiveOptions(c *cli.Context, set *settings.Settings) (collectives.Options, error) {
	var opt collectives.Options
	if s, ok := set.Get(settings.BytesPerToken); ok {
		n, err := strconv.ParseInt(s.Value, 10, 64)
		if err != nil || n < 0 {
			return opt, settingError(c.Command.Name, s, fmt.Errorf("%q: want a positive whole number of bytes", s.Value))
		}
		opt.BytesPerToken = n
	}
	if s, ok := set.Get(settings.Link); ok {
		// One link for every communicator, or intra=…,inter=… (each part
		// a name, a bandwidth or an nccl-tests output).
		ls, err := collectives.ParseLinks(s.Value, func(spec string) (collectives.Link, error) {
			part := s
			part.Value = spec
			l, err := readLink(part)
			if err != nil {
				return collectives.Link{}, err
			}
			return *l, nil
		})
		if err != nil {
			return opt, settingError(c.Command.Name, s, err)
		}
		if ls.All != nil {
			opt.Link = ls.All
		} else {
			opt.Links = ls
		}
	}
	return opt, nil
}

// readLink reads a link setting: a name or a bandwidth, else the
// nccl-tests output it names.
func readLink(s settings.Setting) (*collectives.Link, error) {
	l, perr := collectives.ParseLink(s.Value)
	if perr == nil {
		return &l, nil
	}
	path := s.Path()
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return nil, perr
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ml, err := collectives.ReadNCCLTests(f, path)
	if errors.Is(err, collectives.ErrNoNCCLTests) {
		return nil, fmt.Errorf("%s holds %w", path, collectives.ErrNoNCCLTests)
	}
	return ml, err
}

// findingOptions reads --min-finding: a percent of the step.
func findingOptions(c *cli.Context) (findings.Options, error) {
	s := strings.TrimSpace(c.String("min-finding"))
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || v < 0 || v > 100 || (v != 0 && !strings.HasSuffix(s, "%")) {
		return findings.Options{}, usagef("%s: --min-finding %q: want a percent of the step (1%%, 0.5%%) or 0", c.Command.Name, s)
	}
	if v == 0 {
		return findings.Options{MinShare: -1}, nil
	}
	return findings.Options{MinShare: v / 100}, nil
}
