package lock

import "testing"

func TestInfoKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, want string }{
		{ExclusiveKey, "exclusive"},
		{IntentPrefix + "20260101T000000Z-0123456789abcdef", "intent"},
		{SharedPrefix + "20260101T000000Z-0123456789abcdef", "shared"},
	} {
		if got := (Info{Key: tc.key}).Kind(); got != tc.want {
			t.Errorf("Kind of %s = %q, want %q", tc.key, got, tc.want)
		}
	}
}
