package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/cloudstic/cloudstic/internal/frontend"
)

// cronScheduler keeps one entry per job in a crontab, each after a marker
// comment naming the job.
type cronScheduler struct {
	user string   // -crontab-user; empty: the invoking user's crontab
	env  []string // crontab's environment (childEnv)
}

const cronMarker = "# cloudstic schedule: "

// shellQuote quotes a word for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// cronTime turns -every into cron's five fields, shifted by the job's
// spread so a fleet does not start at the same minute.
func cronTime(s schedule) (string, error) {
	t, err := jobTime(s, "cron")
	switch {
	case err != nil:
		return "", err
	case t.hour < 0:
		return fmt.Sprintf("%d * * * *", t.minute), nil
	case t.weekly:
		return fmt.Sprintf("%d %d * * 1", t.minute, t.hour), nil
	}
	return fmt.Sprintf("%d %d * * *", t.minute, t.hour), nil
}

// cronEntry is the marker and the crontab line of a job.
func cronEntry(s schedule) (string, error) {
	when, err := cronTime(s)
	if err != nil {
		return "", err
	}
	var words []string
	for _, e := range s.env() {
		k, v, _ := strings.Cut(e, "=")
		words = append(words, k+"="+shellQuote(v))
	}
	words = append(words, shellQuote(s.binary))
	for _, w := range s.args() {
		words = append(words, shellQuote(w))
	}
	// cron turns an unescaped % of the command into a newline.
	command := strings.ReplaceAll(strings.Join(words, " "), "%", `\%`)
	return fmt.Sprintf("%s%s\n%s %s\n", cronMarker, s.name, when, command), nil
}

// read returns the crontab's text ("" when the user has none).
func (c *cronScheduler) read(ctx context.Context) (string, error) {
	args := []string{"-l"}
	if c.user != "" {
		args = []string{"-u", c.user, "-l"}
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "crontab", args...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && out.Len() == 0 && exit.ExitCode() == 1 {
		return "", nil // crontab -l exits 1 when the user has no crontab yet
	}
	if err != nil {
		return "", fmt.Errorf("crontab -l: %w: %s", err, frontend.OneLine(stderr.String()))
	}
	return out.String(), nil
}

func (c *cronScheduler) write(ctx context.Context, text string) error {
	args := []string{"-"}
	if c.user != "" {
		args = []string{"-u", c.user, "-"}
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "crontab", args...)
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(text)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("crontab: %w: %s", err, frontend.OneLine(stderr.String()))
	}
	return nil
}

// without returns the crontab without the job's marker and entry.
func without(text, name string) (string, bool) {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	found := false
	for i := 0; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\n") == cronMarker+name {
			found = true
			i++ // and the entry after it
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, ""), found
}

// dryRun prints the entry install would add to the crontab.
func (c *cronScheduler) dryRun(_ context.Context, a *app, s schedule) error {
	entry, err := cronEntry(s)
	if err != nil {
		return err
	}
	whose := "this user's crontab"
	if c.user != "" {
		whose = "the crontab of " + c.user
	}
	fmt.Fprintf(a.io.Stdout, "# in %s, replacing an entry of the same name:\n%s# dry run: nothing was written\n", whose, entry)
	return nil
}

func (c *cronScheduler) install(ctx context.Context, a *app, s schedule) error {
	entry, err := cronEntry(s)
	if err != nil {
		return err
	}
	text, err := c.read(ctx)
	if err != nil {
		return err
	}
	text, _ = without(text, s.name) // reinstalling replaces
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if err := c.write(ctx, text+entry); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "Installed %s in the crontab: %s", s.name, strings.SplitN(entry, "\n", 2)[1])
	return nil
}

func (c *cronScheduler) list(ctx context.Context, a *app) error {
	text, err := c.read(ctx)
	if err != nil {
		return err
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		name, ok := strings.CutPrefix(line, cronMarker)
		if !ok || i+1 >= len(lines) {
			continue
		}
		fields := strings.Fields(lines[i+1])
		if len(fields) < 5 {
			continue
		}
		fmt.Fprintf(a.io.Stdout, "%s\tcron\t%s\tcrontab\n", name, strings.Join(fields[:5], " "))
	}
	return nil
}

func (c *cronScheduler) remove(ctx context.Context, a *app, s schedule) error {
	text, err := c.read(ctx)
	if err != nil {
		return err
	}
	rest, found := without(text, s.name)
	if !found {
		return fmt.Errorf("no schedule %s in the crontab", s.name)
	}
	if err := c.write(ctx, rest); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "Removed %s from the crontab\n", s.name)
	return nil
}
