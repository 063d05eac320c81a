package cluster

import (
	"os"
	"testing"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// binary is the cloudstic binary built for these tests.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, func(_, b string) { binary = b }))
}
