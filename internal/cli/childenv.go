package cli

import (
	"context"
	"strings"
	"sync"

	"github.com/cloudstic/cloudstic/internal/config"
)

// secretEnvNames are the environment variables a run read secrets from
// through env:// references (a profile's password_secret: env://BACKUP_PW).
// The apps of one command line (copy's source, -all-profiles' runs, the
// dashboard's) share one set: IO carries a pointer to it.
type secretEnvNames struct {
	mu    sync.Mutex
	names map[string]bool
}

// add records name as holding a secret.
func (s *secretEnvNames) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[name] = true
}

// has says whether name was recorded.
func (s *secretEnvNames) has(name string) bool {
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
