// Command cloudstic backs up directories into encrypted, deduplicated
// repositories on local disks, S3, B2 or SFTP. All logic lives in
// internal/cli; this is only the process entry point, and the wiring of the
// web dashboard (internal/ui), which the CLI does not import.
package main

import (
	"context"
	"os"

	"github.com/cloudstic/cloudstic/internal/cli"
)

func main() {
	ctx, stop := cli.InterruptContext(context.Background(), os.Stderr, os.Exit)
	code := cli.Main(ctx, os.Args[1:], cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ, Dashboard: dashboard})
	stop()
	os.Exit(code)
}
