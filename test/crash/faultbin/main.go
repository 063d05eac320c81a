// Command faultbin is cloudstic with the test-only fault-injecting store
// wrapper switched on; only test/crash builds and runs it. The released
// binary (cmd/cloudstic) never injects faults.
//
// CLOUDSTIC_TEST_FAULTS chooses the faults (fault.Parse, docs/testing.md);
// without it the binary behaves exactly as cloudstic. When
// CLOUDSTIC_TEST_FAULTS_REPORT names a file, one JSON line counting the
// faults that fired (fault.Fired) is appended to it at exit, so that a test
// can tell its faults happened.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
)

// ReportEnvVar names the file the fired faults are appended to.
const ReportEnvVar = "CLOUDSTIC_TEST_FAULTS_REPORT"

func main() {
	stdio := cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ}
	var (
		mu      sync.Mutex
		wrapped []*fault.Store
	)
	if spec := os.Getenv(fault.EnvVar); spec != "" {
		cfg, err := fault.Parse(spec)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cloudstic: %s: %v\n", fault.EnvVar, err)
			os.Exit(cli.ExitUsage)
		}
		stdio.TestStoreWrapper = func(st store.Store) store.Store {
			fs := fault.New(st, cfg)
			mu.Lock()
			wrapped = append(wrapped, fs)
			mu.Unlock()
			return fs
		}
	}
	ctx, stop := cli.InterruptContext(context.Background(), os.Stderr, os.Exit)
	code := cli.Main(ctx, os.Args[1:], stdio)
	stop()
	if path := os.Getenv(ReportEnvVar); path != "" {
		var total fault.Fired
		mu.Lock()
		for _, fs := range wrapped {
			total = total.Add(fs.Fired())
		}
		mu.Unlock()
		if err := appendReport(path, total); err != nil {
			fmt.Fprintf(os.Stderr, "cloudstic: %s: %v\n", ReportEnvVar, err)
			code = cli.ExitError
		}
	}
	os.Exit(code)
}

// appendReport appends one JSON line to the file at path.
func appendReport(path string, f fault.Fired) error {
	line, err := json.Marshal(f)
	if err != nil {
		return err
	}
	file, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := file.Write(append(line, '\n')); err != nil {
		file.Close() //nolint:errcheck // the write error is the one to report
		return err
	}
	return file.Close()
}
