package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/traceq/traceq/outfile"
)

// On SIGINT or SIGTERM, traceq removes the temporary files it holds (the
// decompressed copy of a .sqlite.gz or of an export read from a pipe,
// outputs not yet renamed into place) and exits as a shell reports a
// process killed by the signal: 128 + its number (130, 143). Installed at
// start-up, so that a signal at any point finds the handler.
func init() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		outfile.RemoveTemps()
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
}
