// Package e2e holds the end-to-end tests of the cloudstic command: TestMain
// builds the binary once and every test runs it as a subprocess against
// real source trees (t.TempDir) and real stores: the local disk, the S3
// server started by scripts/s3-server.sh and the SFTP server started by
// scripts/sftp-server.sh.
//
// Run: eval "$(scripts/s3-server.sh)"; eval "$(scripts/sftp-server.sh)";
// go test ./test/e2e/. Without the servers the remote rows fail, naming the
// script; with CLOUDSTIC_TEST_NO_SERVERS=1 they are skipped.
package e2e
