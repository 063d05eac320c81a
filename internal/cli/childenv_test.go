package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// mainProcessEnv runs cli.Main as cmd/cloudstic does: the process's own
// environment, which the test sets with t.Setenv.
func mainProcessEnv(args ...string) outcome {
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), args, cli.IO{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: os.Getenv, Environ: os.Environ,
	})
	return outcome{stdout.String(), stderr.String(), code}
}

// TestChildrenGetNoSecrets: the programs cloudstic starts (the command of
// backup -stdin-from-command, -password-command) print their environment.
// None of our secrets is in it: no CLOUDSTIC_ variable, nor the variable an
// env:// reference read the password from; PATH, HOME and the user's own
// variables are.
func TestChildrenGetNoSecrets(t *testing.T) {
	dir := t.TempDir()
	const (
		pw        = "child-must-not-see-Pa55"
		fromPW    = "from-secret-Pa55"
		sftpPW    = "sftp-secret-Pa55"
		encKey    = "c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffee1234"
		ownVar    = "MY_OWN_SETTING"
		ownValue  = "kept-for-the-child"
		refVar    = "BACKUP_PW_FOR_TEST"
		storeName = "repo"
	)
	t.Setenv("CLOUDSTIC_STORE", "local:"+filepath.Join(dir, storeName))
	t.Setenv("CLOUDSTIC_PASSWORD", pw)
	t.Setenv("CLOUDSTIC_FROM_PASSWORD", fromPW)
	t.Setenv("CLOUDSTIC_STORE_SFTP_PASSWORD", sftpPW)
	t.Setenv("CLOUDSTIC_NEW_PASSWORD", pw+"-new")
	t.Setenv("CLOUDSTIC_FROM_ENCRYPTION_KEY", encKey)
	t.Setenv(ownVar, ownValue)
	t.Setenv("HOME", dir)
	secrets := []string{pw, fromPW, sftpPW, encKey}

	mainProcessEnv("init").check(t, cli.ExitOK, nil, []string{"Created repository"})

	// absent says what of env must not, and must, be there.
	absent := func(t *testing.T, env string, alsoSecret ...string) {
		t.Helper()
		for _, s := range append(secrets, alsoSecret...) {
			if strings.Contains(env, s) {
				t.Errorf("the child's environment holds the secret %q:\n%s", s, env)
			}
		}
		for _, line := range strings.Split(env, "\n") {
			if strings.HasPrefix(line, "CLOUDSTIC_") {
				t.Errorf("the child inherited %s", line)
			}
		}
		for _, want := range []string{ownVar + "=" + ownValue, "HOME=" + dir, "PATH=" + os.Getenv("PATH")} {
			if !strings.Contains("\n"+env+"\n", "\n"+want+"\n") {
				t.Errorf("the child's environment lacks %s:\n%s", want, env)
			}
		}
	}

	t.Run("stdin-from-command", func(t *testing.T) {
		mainProcessEnv("backup", "-stdin-from-command", "-stdin-filename", "env.txt", "--", "env").check(t, cli.ExitOK, []string{"saved"}, nil)
		o := mainProcessEnv("dump", "latest", "env.txt")
		o.check(t, cli.ExitOK, nil, nil)
		absent(t, o.stdout)
	})
	t.Run("password-command", func(t *testing.T) {
		out := filepath.Join(dir, "pwcmd-env")
		o := mainProcessEnv("list", "-password-command", "env > "+out+"; printf %s "+pw)
		o.check(t, cli.ExitOK, nil, nil)
		env, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		absent(t, string(env))
	})
	t.Run("env reference", func(t *testing.T) {
		// The password comes from an env:// reference: that variable is a
		// secret too, though not one of ours by name.
		refSecret := pw // the repository's password, under another name
		t.Setenv(refVar, refSecret)
		t.Setenv("CLOUDSTIC_PASSWORD", "")
		t.Setenv("CLOUDSTIC_PASSWORD_REF", "env://"+refVar)
		mainProcessEnv("backup", "-stdin-from-command", "-stdin-filename", "env2.txt", "--", "env").check(t, cli.ExitOK, []string{"saved"}, nil)
		o := mainProcessEnv("dump", "latest", "env2.txt")
		o.check(t, cli.ExitOK, nil, nil)
		absent(t, o.stdout, refVar+"=")
	})
}
