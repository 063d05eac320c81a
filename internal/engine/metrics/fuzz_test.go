package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzPreviousSuccess: whatever a file at the metrics path holds (ours, a
// foreign one, garbage), reading the last success time from it neither
// panics nor fails the run.
func FuzzPreviousSuccess(f *testing.F) {
	f.Add([]byte("# TYPE " + LastSuccess + " gauge\n" + LastSuccess + `{profile="p",repository="local:/r"} 1.7e+09` + "\n"))
	f.Add([]byte(LastSuccess + " 12\n"))
	f.Add([]byte("not metrics at all {{{\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "m.prom")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// The property: any content is read without a panic (the values
		// of well-formed files are tested in metrics_test.go).
		previousSuccess(path, Labels{Repository: "local:/r", Profile: "p"})
	})
}
