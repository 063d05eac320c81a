package cli

import (
	"context"
	"strings"
	"sync"

	"github.com/cloudstic/cloudstic/internal/config"
)

// nameSet is a set of names that the apps of one command line (copy's
// source, -all-profiles' runs, the dashboard's) share: IO carries a pointer
// to it. Safe for concurrent use.
type nameSet struct {
	mu    sync.Mutex
	names map[string]bool
}

// add records name and says whether it was new.
func (s *nameSet) add(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]bool{}
	}
	if s.names[name] {
		return false
	}
	s.names[name] = true
	return true
}

// has says whether name was recorded.
func (s *nameSet) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

// noteEnvRef records the variable an env:// reference reads, before it is
// resolved.
func (a *app) noteEnvRef(ref string) {
	r, err := config.ParseRef(ref)
	if err != nil || r.Scheme != config.SchemeEnv || a.io.secretEnv == nil {
		return // a bad reference fails when it is resolved
	}
	a.io.secretEnv.add(r.Path)
}

// childEnv is the environment of the programs this run starts: the
// command of backup -stdin-from-command, -password-command, crontab and
// systemctl. None of them needs our secrets, so every CLOUDSTIC_ variable
// (passwords, keys, and the settings beside them) is left out, and so is
// every variable an env:// reference read a secret from. The rest (PATH,
// HOME, the user's own variables, AWS_* credentials the user exported for
// every program) is passed on. The result is never nil: a nil
// exec.Cmd.Env would mean our whole environment.
func (a *app) childEnv() []string {
	env := []string{}
	if a.io.Environ == nil {
		return env
	}
	for _, kv := range a.io.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		// Windows names are case-insensitive: Cloudstic_Password is ours too.
		if strings.HasPrefix(strings.ToUpper(name), "CLOUDSTIC_") {
			continue
		}
		if a.io.secretEnv != nil && a.io.secretEnv.has(name) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// resolveSecret reads the secret ref points to, noting an env:// variable
// so that the programs this run starts do not inherit it.
func (a *app) resolveSecret(ctx context.Context, ref string) (string, error) {
	a.noteEnvRef(ref)
	return a.resolver().Resolve(ctx, ref)
}
