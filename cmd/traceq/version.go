package main

import "runtime/debug"

// Version is traceq's version, set at build time:
//
//	go build -ldflags "-X main.Version=v1.2.0" ./cmd/traceq
//
// Without it, the module version of a `go install …@version` build, or
// "devel". traceq export records it (inputs.traceq_version).
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
