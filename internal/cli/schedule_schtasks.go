package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// schtasksScheduler registers a Task Scheduler task per job from an XML
// task definition, kept in the config directory's schedule folder.
type schtasksScheduler struct {
	dir string   // where the task XML files are kept
	env []string // schtasks' environment (childEnv)
}

func (a *app) newSchtasks() (scheduler, error) {
	dir, err := config.Dir(a.io.Getenv)
	if err != nil {
		return nil, err
	}
	return &schtasksScheduler{dir: filepath.Join(dir, "schedule"), env: a.childEnv()}, nil
}

// taskName is a job's name in Task Scheduler, in a cloudstic folder.
func taskName(name string) string { return `\cloudstic\` + name }

// The task XML (Task Scheduler schema 1.2), the elements used here in the
// order schtasks exports them.
type (
	taskXML struct {
		XMLName      xml.Name     `xml:"http://schemas.microsoft.com/windows/2004/02/mit/task Task"`
		Version      string       `xml:"version,attr"`
		Registration taskRegInfo  `xml:"RegistrationInfo"`
		Trigger      taskTrigger  `xml:"Triggers>CalendarTrigger"`
		Principal    taskPrinc    `xml:"Principals>Principal"`
		Settings     taskSettings `xml:"Settings"`
		Exec         taskExec     `xml:"Actions>Exec"`
	}
	taskRegInfo struct {
		Description string `xml:"Description"`
		URI         string `xml:"URI"`
	}
	taskTrigger struct {
		Interval      string    `xml:"Repetition>Interval,omitempty"`
		StartBoundary string    `xml:"StartBoundary"`
		Enabled       bool      `xml:"Enabled"`
		DaysInterval  int       `xml:"ScheduleByDay>DaysInterval,omitempty"`
		WeeksInterval int       `xml:"ScheduleByWeek>WeeksInterval,omitempty"`
		Monday        *struct{} `xml:"ScheduleByWeek>DaysOfWeek>Monday"`
	}
	taskPrinc struct {
		ID        string `xml:"id,attr"`
		LogonType string `xml:"LogonType"`
		RunLevel  string `xml:"RunLevel"`
	}
	taskSettings struct {
		MultipleInstances  string `xml:"MultipleInstancesPolicy"`
		DisallowOnBattery  bool   `xml:"DisallowStartIfOnBatteries"`
		StopOnBattery      bool   `xml:"StopIfGoingOnBatteries"`
		StartWhenAvailable bool   `xml:"StartWhenAvailable"`
		Priority           int    `xml:"Priority"`
	}
	taskExec struct {
		Command   string `xml:"Command"`
		Arguments string `xml:"Arguments"`
	}
)

// errTaskQuote means a value cannot be passed through cmd.exe safely.
var errTaskQuote = errors.New(`cannot be passed to a scheduled task: it holds '"' or '%'`)

// taskDefinition is a job's task: a calendar trigger at the job's time
// (repeated hourly for -every hourly), a run missed while the machine was
// off made up when it is on (StartWhenAvailable), one run at a time, at
// below-normal priority, on battery too. Task Scheduler sets no
// environment, so the command is cmd.exe setting the pinned variables and
// then running the backup.
func taskDefinition(s schedule) (taskXML, error) {
	t, err := jobTime(s, "schtasks")
	if err != nil {
		return taskXML{}, err
	}
	var cmd []string
	for _, e := range s.env() {
		cmd = append(cmd, `set "`+e+`"`)
	}
	words := []string{}
	for _, w := range append([]string{s.binary}, s.args()...) {
		words = append(words, `"`+w+`"`)
	}
	cmd = append(cmd, strings.Join(words, " "))
	line := strings.Join(cmd, " && ")
	for _, w := range append(s.env(), append([]string{s.binary}, s.args()...)...) {
		if strings.ContainsAny(w, `"%`) {
			return taskXML{}, fmt.Errorf("%q %w", w, errTaskQuote)
		}
	}
	what := "profile " + s.profile
	if s.allProfiles {
		what = "every enabled profile"
	}
	hour := t.hour
	trig := taskTrigger{Enabled: true, DaysInterval: 1}
	switch {
	case t.hour < 0:
		hour, trig.Interval = 0, "PT1H"
	case t.weekly:
		trig.DaysInterval, trig.WeeksInterval, trig.Monday = 0, 1, &struct{}{}
	}
	trig.StartBoundary = fmt.Sprintf("2000-01-03T%02d:%02d:00", hour, t.minute) // a Monday, long past
	return taskXML{
		Version:      "1.2",
		Registration: taskRegInfo{Description: "cloudstic backup of " + what + " (written by 'cloudstic schedule install')", URI: taskName(s.name)},
		Trigger:      trig,
		Principal:    taskPrinc{ID: "Author", LogonType: "InteractiveToken", RunLevel: "LeastPrivilege"},
		Settings:     taskSettings{MultipleInstances: "IgnoreNew", StartWhenAvailable: true, Priority: 7},
		Exec:         taskExec{Command: `%SystemRoot%\System32\cmd.exe`, Arguments: `/d /s /c "` + line + `"`},
	}, nil
}

// taskFile is the task's XML as schtasks reads it: UTF-16 with a byte
// order mark, as Task Scheduler exports tasks.
func taskFile(t taskXML) ([]byte, error) {
	body, err := xml.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	text := `<?xml version="1.0" encoding="UTF-16"?>` + "\n" + string(body) + "\n"
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xFE})
	for _, u := range utf16.Encode([]rune(text)) {
		b.Write([]byte{byte(u), byte(u >> 8)})
	}
	return b.Bytes(), nil
}

// readTaskFile decodes a task file taskFile wrote.
func readTaskFile(data []byte) (taskXML, error) {
	var t taskXML
	if len(data) < 2 || data[0] != 0xFF || data[1] != 0xFE || len(data)%2 != 0 {
		return t, errors.New("not a UTF-16 task file")
	}
	u := make([]uint16, 0, len(data)/2-1)
	for i := 2; i < len(data); i += 2 {
		u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
	}
	d := xml.NewDecoder(strings.NewReader(string(utf16.Decode(u))))
	// The text is decoded already: the declaration's UTF-16 is no longer so.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	err := d.Decode(&t)
	return t, err
}

// path is where a job's task XML is kept.
func (st *schtasksScheduler) path(s schedule) string { return filepath.Join(st.dir, s.name+".xml") }

func (st *schtasksScheduler) file(s schedule) ([]byte, error) {
	t, err := taskDefinition(s)
	if err != nil {
		return nil, err
	}
	return taskFile(t)
}

func (st *schtasksScheduler) dryRun(_ context.Context, a *app, s schedule) error {
	t, err := taskDefinition(s)
	if err != nil {
		return err
	}
	body, err := xml.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "# %s (written as UTF-16)\n%s\n", st.path(s), body)
	fmt.Fprintf(a.io.Stdout, "# then: schtasks /Create /XML %s /TN %s /F\n# dry run: nothing was written\n", st.path(s), taskName(s.name))
	return nil
}

func (st *schtasksScheduler) install(ctx context.Context, a *app, s schedule) error {
	data, err := st.file(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return err
	}
	if err := config.WriteFileAtomic(st.path(s), data); err != nil {
		return err
	}
	// /F replaces a task of the same name: reinstalling replaces.
	if err := st.schtasks(ctx, "/Create", "/XML", st.path(s), "/TN", taskName(s.name), "/F"); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "Installed task %s (%s)\n", taskName(s.name), s.every)
	return nil
}

func (st *schtasksScheduler) schtasks(ctx context.Context, args ...string) error {
	c := exec.CommandContext(ctx, "schtasks", args...)
	c.Env = st.env
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("schtasks %s: %w: %s", strings.Join(args, " "), err, frontend.OneLine(out.String()))
	}
	return nil
}

func (st *schtasksScheduler) list(_ context.Context, a *app) error {
	files, err := filepath.Glob(filepath.Join(st.dir, "cloudstic-backup-*.xml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		when := "?"
		if t, err := readTaskFile(data); err == nil {
			_, when, _ = strings.Cut(t.Trigger.StartBoundary, "T")
			switch {
			case t.Trigger.Interval != "":
				when = "hourly from " + when
			case t.Trigger.WeeksInterval > 0:
				when = "Mondays " + when
			default:
				when = "daily " + when
			}
		}
		fmt.Fprintf(a.io.Stdout, "%s\tschtasks\t%s\t%s\n", strings.TrimSuffix(filepath.Base(f), ".xml"), when, taskName(""))
	}
	return nil
}

func (st *schtasksScheduler) remove(ctx context.Context, a *app, s schedule) error {
	if _, err := os.Stat(st.path(s)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no schedule %s in %s", s.name, st.dir)
	}
	if err := st.schtasks(ctx, "/Delete", "/TN", taskName(s.name), "/F"); err != nil {
		return err
	}
	if err := os.Remove(st.path(s)); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "Removed task %s\n", taskName(s.name))
	return nil
}
