package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/cloudstic/cloudstic/internal/frontend"
)

// uiFlags are the flags of `cloudstic ui`.
type uiFlags struct {
	listen, tlsCert, tlsKey    string
	insecure, readOnly         bool
	authUser, authPasswordFile string
	restoreRoot                string
}

func (f *uiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to serve on; other than the loopback interface it needs -tls-cert/-tls-key or -listen-insecure")
	fs.BoolVar(&f.insecure, "listen-insecure", false, "INSECURE: serve plain HTTP on a non-loopback address")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM), with -tls-key")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key (PEM) of -tls-cert")
	fs.StringVar(&f.authUser, "auth-user", "", "log in with HTTP basic authentication as this user (with -auth-password-file) instead of the printed access token")
	fs.StringVar(&f.authPasswordFile, "auth-password-file", "", "file holding the password of -auth-user, readable only by its owner")
	fs.BoolVar(&f.readOnly, "read-only", false, "hide and refuse every writing action (backup, forget+prune, restore)")
	fs.StringVar(&f.restoreRoot, "restore-root", "", "allow restores only into this directory")
}

// check validates the flags that need no repository.
func (f *uiFlags) check() error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageErr("give -tls-cert and -tls-key together")
	}
	if (f.authUser == "") != (f.authPasswordFile == "") {
		return usageErr("give -auth-user and -auth-password-file together")
	}
	if err := checkListen(f.listen, f.tlsCert != "", f.insecure); err != nil {
		return usageErr("%v", err)
	}
	if f.tlsCert != "" {
		if _, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey); err != nil {
			return fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
	}
	if f.restoreRoot != "" {
		fi, err := os.Stat(f.restoreRoot)
		if err != nil {
			return fmt.Errorf("-restore-root: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("-restore-root %s is not a directory", f.restoreRoot)
		}
		f.restoreRoot = absPath(f.restoreRoot)
	}
	return nil
}

func runUI(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var f uiFlags
	f.register(fs)
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	cfg := frontend.Config{ReadOnly: f.readOnly, RestoreRoot: f.restoreRoot, Secure: f.tlsCert != ""}
	if f.authUser != "" {
		pw, err := a.resolver().Resolve(ctx, "file://"+absPath(f.authPasswordFile))
		if err != nil {
			return fmt.Errorf("-auth-password-file: %w", err)
		}
		if pw == "" {
			return fmt.Errorf("-auth-password-file %s is empty", f.authPasswordFile)
		}
		cfg.User, cfg.Password = f.authUser, pw
	} else {
		tok, err := newToken()
		if err != nil {
			return err
		}
		cfg.Token = tok
	}
	repos, closeAll, err := a.uiRepos(ctx)
	defer closeAll()
	if err != nil {
		return err
	}
	cfg.Repos = repos
	host, _, _ := net.SplitHostPort(f.listen) // checkListen parsed it
	cfg.LoopbackOnly = frontend.LoopbackHost(host) && f.tlsCert == "" && !f.insecure
	return a.serveUI(ctx, cfg, f)
}

// serveUI listens, prints the address (with the token, once) and serves
// until Ctrl-C.
func (a *app) serveUI(ctx context.Context, cfg frontend.Config, f uiFlags) error {
	if a.io.Dashboard == nil {
		return errNoDashboard
	}
	srv, err := a.io.Dashboard(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("-listen %s: %w", f.listen, err)
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	addr := ln.Addr().String()
	if h, port, err := net.SplitHostPort(addr); err == nil && net.ParseIP(h).IsLoopback() {
		addr = net.JoinHostPort(h, port)
	}
	url := scheme + "://" + addr + "/"
	if cfg.Token != "" {
		url += "?token=" + cfg.Token
	}
	fmt.Fprintf(a.io.Stderr, "cloudstic ui: serving %d repositories at %s\n", len(cfg.Repos), url)
	fmt.Fprintln(a.io.Stderr, "cloudstic ui: press Ctrl-C to stop")
	hs := newUIServer(ctx, srv, defaultUIServerLimits())
	done := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			done <- hs.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			done <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("stopping the web server: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return fmt.Errorf("%w: %w", errDashboardStopped, ctx.Err())
}

// uiRepos opens the repositories to show: the one -store or -profile
// names, or with -all-profiles each store the profiles use (once, with
// every profile backing up into it).
func (a *app) uiRepos(ctx context.Context) ([]frontend.Repository, func(), error) {
	var subs []*app
	closeAll := func() {
		for _, s := range subs {
			s.closeStore()
		}
	}
	if !a.g.prof.all {
		subs = append(subs, a)
		r, err := a.openRepo(ctx)
		if err != nil {
			return nil, closeAll, err
		}
		rp := frontend.Repository{Name: a.g.repo.URI, Store: a.g.repo.URI, Repo: r}
		if name := a.g.prof.profile; name != "" {
			f, err := a.loadProfiles()
			if err != nil {
				return nil, closeAll, err
			}
			rp.Name, rp.Profile = name, name
			rp.Actions = a.profileActions(r, name, f.Profiles[name])
		}
		rp.Actions = append(rp.Actions, a.checkAction(r))
		return []frontend.Repository{rp}, closeAll, nil
	}
	f, err := a.loadProfiles()
	if err != nil {
		return nil, closeAll, err
	}
	byStore := map[string]int{}
	var repos []frontend.Repository
	for _, name := range f.ProfileNames() {
		p := f.Profiles[name]
		if !p.IsEnabled() || p.CloudDrive() {
			continue
		}
		if k, ok := byStore[p.Store]; ok {
			// Same store: the profile's runs go before the store's check.
			acts := repos[k].Actions
			check := acts[len(acts)-1]
			repos[k].Actions = append(append(acts[:len(acts)-1:len(acts)-1], subs[k].profileActions(repos[k].Repo, name, p)...), check)
			repos[k].Profile = "" // several profiles: the series are the store's
			continue
		}
		sub, err := a.forProfile(ctx, name)
		if err != nil {
			return nil, closeAll, fmt.Errorf("profile %s: %w", name, err)
		}
		subs = append(subs, sub)
		r, err := sub.openRepo(ctx)
		if err != nil {
			return nil, closeAll, fmt.Errorf("profile %s: %w", name, err)
		}
		label := p.Store
		if label == "" {
			label = sub.g.repo.URI
		}
		byStore[p.Store] = len(repos)
		acts := append(sub.profileActions(r, name, p), sub.checkAction(r))
		repos = append(repos, frontend.Repository{Name: label, Store: sub.g.repo.URI, Profile: name, Repo: r, Actions: acts})
	}
	if len(repos) == 0 {
		return nil, closeAll, errors.New("no enabled profile to show: add one with 'cloudstic profile new'")
	}
	return repos, closeAll, nil
}
