package cmdoutput

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// ErrFailed means the command exited with a non-zero status or was killed
// by a signal.
var ErrFailed = errors.New("command failed")

// Reader is the standard output of a running command. Read returns io.EOF
// once the output has ended and the command has exited with status 0;
// otherwise the error says how it ended (wrapping ErrFailed when it exited
// non-zero or died of a signal, the context's error when its end killed
// the command).
type Reader struct {
	ctx    context.Context
	cmd    *exec.Cmd
	out    io.ReadCloser
	name   string
	err    error // final: io.EOF or why the command failed
	waited bool
}

// Start runs argv[0] with the other elements as its arguments (no shell)
// in the environment env, and returns its standard output. Its standard
// error goes to stderr. The command is killed when ctx ends (Ctrl-C). The
// caller reads the Reader to its end, or calls Close.
//
// env is the command's whole environment: the caller leaves out its
// secrets. A nil env is an empty one, never the caller's (exec.Cmd's nil).
func Start(ctx context.Context, argv, env []string, stderr io.Writer) (*Reader, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no command given")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{}, env...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	return &Reader{ctx: ctx, cmd: cmd, out: out, name: strings.Join(argv, " ")}, nil
}

// Read reads the command's output. At the end of the output it waits for
// the command, and reports io.EOF only if it succeeded.
func (r *Reader) Read(b []byte) (int, error) {
	if r.waited {
		return 0, r.err
	}
	n, err := r.out.Read(b)
	if errors.Is(err, io.EOF) {
		r.wait()
		return n, r.err
	}
	if err != nil {
		return n, fmt.Errorf("reading the output of %q: %w", r.name, err)
	}
	return n, nil
}

// Close kills the command if it still runs and waits for it; it returns
// nil when the command had succeeded.
func (r *Reader) Close() error {
	if !r.waited {
		if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		r.wait()
	}
	if errors.Is(r.err, io.EOF) {
		return nil
	}
	return r.err
}

// wait reaps the command and sets r.err from its exit status.
func (r *Reader) wait() {
	r.waited = true
	err := r.cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		r.err = io.EOF
	case r.ctx.Err() != nil: // killed because the backup was interrupted
		r.err = fmt.Errorf("%q stopped: %w", r.name, context.Cause(r.ctx))
	case errors.As(err, &exit) && exit.Exited():
		r.err = fmt.Errorf("%w: %q exited with status %d", ErrFailed, r.name, exit.ExitCode())
	case errors.As(err, &exit):
		r.err = fmt.Errorf("%w: %q was killed (%v)", ErrFailed, r.name, exit.ProcessState)
	default:
		r.err = fmt.Errorf("%w: %q: %w", ErrFailed, r.name, err)
	}
}
