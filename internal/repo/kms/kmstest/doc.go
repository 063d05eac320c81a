// Package kmstest gives tests the local KMS server that scripts/kms-server.sh
// starts (local-kms on 127.0.0.1) and makes keys on it through the real KMS
// API. A test that needs the server and cannot find it fails (it is skipped
// only with CLOUDSTIC_TEST_NO_SERVERS=1).
package kmstest
