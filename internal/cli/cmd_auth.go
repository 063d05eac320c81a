package cli

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

const authUsage = "auth list | show NAME | new -name N -provider google|onedrive [-google-credentials F | -google-credentials-ref REF] [-google-token-file F | -google-token-ref REF] [-onedrive-client-id ID] [-onedrive-token-file F | -onedrive-token-ref REF] | login [-device] [-name] NAME"

func runAuth(ctx context.Context, a *app, args []string) error {
	return a.runSubcommand(ctx, "auth", authUsage,
		[]subcommand{{"list", authList}, {"show", authShow}, {"new", authNew}, {"login", authLogin}}, args)
}

// authEntry is an auth entry in auth list -json and auth show -json.
type authEntry struct {
	Name string `json:"name"`
	config.Auth
	// TokenRef is where the token is kept; LoggedIn whether one is there
	// (show only).
	TokenRef string `json:"token_ref"`
	LoggedIn *bool  `json:"logged_in,omitempty"`
}

func entryOf(name string, e config.Auth) authEntry {
	ref := tokenRef(e.GoogleTokenRef, e.GoogleTokenFile)
	if e.Provider == operation.ProviderOneDrive {
		ref = tokenRef(e.OneDriveTokenRef, e.OneDriveTokenFile)
	}
	return authEntry{Name: name, Auth: e, TokenRef: ref}
}

func authList(_ context.Context, a *app, args []string) error {
	if err := a.parseNoArgs(a.flags(), args); err != nil {
		return err
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	out := []authEntry{}
	for _, name := range sortedKeys(f.Auth) {
		out = append(out, entryOf(name, f.Auth[name]))
	}
	if a.g.json {
		a.writeJSON(out)
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	for _, e := range out {
		fmt.Fprintf(w, "%s\t%s\t%s\n", termtext.Sprintf("%s", e.Name), e.Provider, termtext.Sprintf("%s", e.TokenRef))
	}
	return w.Flush()
}

func authShow(ctx context.Context, a *app, args []string) error {
	name, err := a.parseName(a.flags(), args, "auth show NAME")
	if err != nil {
		return err
	}
	f, err := a.loadProfiles()
	if err != nil {
		return err
	}
	e, ok := f.Auth[name]
	if !ok {
		return fmt.Errorf("no auth entry %q in %s", name, f.Path)
	}
	out := entryOf(name, e)
	_, rerr := a.resolver().Resolve(ctx, out.TokenRef)
	in := rerr == nil
	out.LoggedIn = &in
	if a.g.json {
		a.writeJSON(out)
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(w, "%s:\t%s\n", k, termtext.Sprintf("%s", v)) }
	row("name", name)
	row("provider", e.Provider)
	for _, kv := range [][2]string{{"google_credentials", e.GoogleCreds}, {"google_credentials_ref", e.GoogleCredsRef},
		{"onedrive_client_id", e.OneDriveClientID}} {
		if kv[1] != "" {
			row(kv[0], kv[1])
		}
	}
	if e.GoogleCredsJSON != "" {
		row("google_credentials_json", "(inline)")
	}
	row("token", out.TokenRef)
	row("logged in", map[bool]string{true: "yes", false: "no (run 'cloudstic auth login " + name + "')"}[in])
	return w.Flush()
}

func authNew(_ context.Context, a *app, args []string) error {
	fs := a.flags()
	name := fs.String("name", "", "auth entry name (required)")
	provider := fs.String("provider", "", "google or onedrive (required)")
	var cf cloudFlags
	fs.StringVar(&cf.googleCreds, "google-credentials", "", "Google OAuth client file (the JSON of the Google Cloud console)")
	fs.StringVar(&cf.googleCredsRef, "google-credentials-ref", "", "secret reference holding the Google OAuth client JSON")
	fs.StringVar(&cf.googleTokenFile, "google-token-file", "", "file to keep the Google token in (mode 0600)")
	fs.StringVar(&cf.googleTokenRef, "google-token-ref", "", "secret reference to keep the Google token in (default config-token://google/NAME)")
	fs.StringVar(&cf.onedriveClientID, "onedrive-client-id", "", "Microsoft application (client) id")
	fs.StringVar(&cf.onedriveTokenFile, "onedrive-token-file", "", "file to keep the OneDrive token in (mode 0600)")
	fs.StringVar(&cf.onedriveTokenRef, "onedrive-token-ref", "", "secret reference to keep the OneDrive token in (default config-token://onedrive/NAME)")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return usageErr("auth new: -name is required")
	}
	// Paths are kept absolute: a scheduled backup runs elsewhere.
	for _, p := range []*string{&cf.googleCreds, &cf.googleTokenFile, &cf.onedriveTokenFile} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return fmt.Errorf("auth new: %w", err)
			}
			*p = abs
		}
	}
	e := config.Auth{Provider: *provider}
	switch *provider {
	case operation.ProviderGoogle:
		e.GoogleCreds, e.GoogleCredsRef, e.GoogleTokenFile, e.GoogleTokenRef = cf.googleCreds, cf.googleCredsRef, cf.googleTokenFile, cf.googleTokenRef
		if e.GoogleTokenFile == "" && e.GoogleTokenRef == "" {
			e.GoogleTokenRef = "config-token://google/" + *name
		}
	case operation.ProviderOneDrive:
		e.OneDriveClientID, e.OneDriveTokenFile, e.OneDriveTokenRef = cf.onedriveClientID, cf.onedriveTokenFile, cf.onedriveTokenRef
		if e.OneDriveTokenFile == "" && e.OneDriveTokenRef == "" {
			e.OneDriveTokenRef = "config-token://onedrive/" + *name
		}
	default:
		return usageErr("auth new: -provider %q: want google or onedrive", *provider)
	}
	for _, ref := range []string{e.GoogleCredsRef, e.GoogleTokenRef, e.OneDriveTokenRef} {
		if ref != "" {
			if _, err := config.ParseRef(ref); err != nil {
				return usageErr("auth new: %v", err)
			}
		}
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	if err := f.AddAuth(*name, e); err != nil {
		return err
	}
	if err := f.Save(); err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(entryOf(*name, e))
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "Auth %s (%s) saved in %s; log in with 'cloudstic auth login %s'\n", *name, *provider, f.Path, *name)
	return nil
}

func authLogin(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	device := fs.Bool("device", false, "log in with a device code (for a host without a browser): open the URL shown on any device and enter the code")
	nameFlag := fs.String("name", "", "the auth entry (or give it as the argument)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	name := *nameFlag
	if len(pos) == 1 && name == "" {
		name = pos[0]
	} else if len(pos) > 0 || name == "" {
		return usageErr("usage: cloudstic auth login [-device] NAME")
	}
	f, err := a.loadProfiles()
	if err != nil {
		return err
	}
	e, ok := f.Auth[name]
	if !ok {
		return fmt.Errorf("no auth entry %q in %s: create it with 'cloudstic auth new -name %s -provider google|onedrive'", name, f.Path, name)
	}
	cf := cloudFlags{authRef: name}
	auth, err := a.cloudAuthOf(e.Provider, &cf)
	if err != nil {
		return err
	}
	err = operation.CloudSignIn(ctx, auth.login, *device, func(uri, code string) {
		if code != "" {
			fmt.Fprintln(a.io.Stderr, termtext.Sprintf("To log in, open %s and enter the code %s", uri, code))
			return
		}
		fmt.Fprintln(a.io.Stderr, "To log in, open this URL in a browser (on a host without one, use 'auth login -device'):")
		fmt.Fprintln(a.io.Stderr, termtext.Sprintf("%s", uri))
		openBrowser(uri)
	})
	if err != nil {
		return err
	}
	typ := "gdrive"
	if e.Provider == operation.ProviderOneDrive {
		typ = "onedrive"
	}
	d, err := a.cloudDrive(cloudURI{typ: typ, provider: e.Provider, path: "/"}, &cf)
	if err != nil {
		return err
	}
	account, err := operation.CloudAccount(ctx, d)
	if err != nil {
		return fmt.Errorf("logged in and saved the token at %s, but reading the drive failed: %w", auth.tokenRef, err)
	}
	fmt.Fprintln(a.io.Stdout, termtext.Sprintf("Logged in to %s as %s; token saved at %s", e.Provider, account, auth.tokenRef))
	return nil
}

// openBrowser tries to open u in the user's browser; the URL is printed
// anyway.
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err == nil {
		go cmd.Wait() //nolint:errcheck // the browser's fate is not ours
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
