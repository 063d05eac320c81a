package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

const setupUsage = "setup workstation [-yes] [-dry-run] [-store-ref NAME] [-json]"

func runSetup(ctx context.Context, a *app, args []string) error {
	return a.runSubcommand(ctx, "setup", setupUsage, []subcommand{{"workstation", setupWorkstation}}, args)
}

// setupPlan is what setup workstation proposes, and (-json) prints.
type setupPlan struct {
	DryRun   bool               `json:"dry_run"`
	File     string             `json:"file"`
	Profiles []setupPlanProfile `json:"profiles"`
	StoreRef string             `json:"store_ref"`
	Written  bool               `json:"written"`
}

// setupPlanProfile is one proposed profile: created, or skipped and why.
type setupPlanProfile struct {
	Action  string         `json:"action"` // create or skip
	Kind    string         `json:"kind"`   // folder or drive
	Name    string         `json:"name"`
	Profile config.Profile `json:"profile"`
	Reason  string         `json:"reason"` // why it is skipped; "" for create
}

// setupWorkstation proposes a profile for each usual folder of this OS
// that exists and each portable drive mounted, and writes them to
// profiles.yaml after a confirmation (or -yes). A name the file already
// has is never overwritten: the plan says it is skipped.
func setupWorkstation(ctx context.Context, a *app, args []string) error {
	a.g.prof.storeCmd = true
	fs := a.flags()
	yes := fs.Bool("yes", false, "write the profiles without asking")
	dryRun := fs.Bool("dry-run", false, "show the plan; write nothing")
	storeRef := fs.String("store-ref", "", "the store entry of profiles.yaml the new profiles back up to (it must exist)")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	if *yes && *dryRun {
		return usageErr("-yes writes the profiles and -dry-run writes nothing: give one")
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	if *storeRef != "" {
		if _, ok := f.Stores[*storeRef]; !ok {
			return usageErr("-store-ref %q: no such store in %s (add it with 'cloudstic store new -name %s -uri URI')", *storeRef, f.Path, *storeRef)
		}
	}
	plan, err := a.proposeProfiles(ctx, f, *storeRef)
	if err != nil {
		return err
	}
	plan.DryRun = *dryRun
	creates := 0
	for _, p := range plan.Profiles {
		if p.Action == "create" {
			creates++
		}
	}
	if !a.g.json {
		a.printSetupPlan(plan)
	}
	if *dryRun || creates == 0 {
		return a.finishSetup(plan)
	}
	if !*yes {
		answer, err := a.ask(ctx, "", fmt.Sprintf("write %d profiles to %s? [y/N]", creates, f.Path), false, "-yes (to write the profiles without a terminal) or -dry-run")
		if err != nil {
			return err
		}
		if answer != "y" && answer != "yes" {
			return errors.New("nothing was written")
		}
	}
	for _, p := range plan.Profiles {
		if p.Action != "create" {
			continue
		}
		if err := f.AddProfile(p.Name, p.Profile); err != nil {
			return err
		}
	}
	if err := f.Save(); err != nil {
		return err
	}
	plan.Written = true
	return a.finishSetup(plan)
}

// proposeProfiles is the plan: the usual folders that exist, then the
// portable drives, each skipped when its name is taken.
func (a *app) proposeProfiles(ctx context.Context, f *config.File, storeRef string) (setupPlan, error) {
	plan := setupPlan{File: f.Path, StoreRef: storeRef, Profiles: []setupPlanProfile{}}
	folders, err := userFolders(a.io.Getenv)
	if err != nil {
		return plan, err
	}
	taken := map[string]bool{}
	add := func(kind, name, path string) {
		p := setupPlanProfile{Action: "create", Kind: kind, Name: name, Profile: config.Profile{Source: "local:" + path, Store: storeRef}}
		old, exists := f.Profiles[name]
		switch {
		case exists:
			p.Action, p.Reason = "skip", fmt.Sprintf("%s already has a profile %s (source %s): left as it is", f.Path, name, old.Source)
		case taken[name]:
			p.Action, p.Reason = "skip", "another proposal has this name: add it with 'cloudstic profile new'"
		}
		taken[name] = true
		plan.Profiles = append(plan.Profiles, p)
	}
	for _, d := range folders {
		if fi, err := os.Stat(d.path); err == nil && fi.IsDir() {
			add("folder", d.name, d.path)
		}
	}
	drives, err := discoverMounts(ctx, true)
	if errors.Is(err, operation.ErrDiscoverUnsupported) {
		a.warnf("portable drives are not listed on this OS; only folders are proposed")
		drives, err = nil, nil
	}
	if err != nil {
		return plan, err
	}
	for _, d := range drives {
		add("drive", driveProfileName(d), d.MountPoint)
	}
	return plan, nil
}

// driveProfileName names a portable drive's profile: drive-LABEL, else
// drive- and the start of its UUID, else of its mount point's last name;
// lower case, with what a profile name may not hold turned into '-'.
func driveProfileName(m operation.SourceMount) string {
	base := m.Label
	if base == "" && len(m.UUID) >= 8 {
		base = m.UUID[:8]
	}
	if base == "" {
		parts := strings.FieldsFunc(m.MountPoint, func(r rune) bool { return r == '/' || r == '\\' || r == ':' })
		if len(parts) > 0 {
			base = parts[len(parts)-1]
		}
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(base))
	return "drive-" + strings.Trim(name, "-.")
}

// printSetupPlan prints the plan as a table.
func (a *app) printSetupPlan(plan setupPlan) {
	store := "store " + plan.StoreRef
	if plan.StoreRef == "" {
		store = "no store (give -store-ref NAME, or -store when backing up)"
	}
	fmt.Fprintf(a.io.Stdout, "Profiles for %s, %s:\n", plan.File, store)
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	for _, p := range plan.Profiles {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", p.Action, p.Name, p.Profile.Source, p.Reason)
	}
	_ = w.Flush() // the output's first write error fails the command (recordingWriter)
	if len(plan.Profiles) == 0 {
		fmt.Fprintln(a.io.Stdout, "  (no usual folder exists and no portable drive is mounted)")
	}
}

// finishSetup reports the outcome: the plan as JSON, or a line.
func (a *app) finishSetup(plan setupPlan) error {
	switch {
	case a.g.json:
		a.writeJSON(plan)
	case plan.Written:
		fmt.Fprintf(a.io.Stdout, "Wrote the new profiles to %s\n", plan.File)
	default:
		fmt.Fprintln(a.io.Stdout, "Nothing was written")
	}
	return nil
}
