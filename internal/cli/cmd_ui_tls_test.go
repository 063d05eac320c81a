package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestUITLS: with -tls-cert and -tls-key the dashboard serves HTTPS only,
// and its session cookie is Secure.
func TestUITLS(t *testing.T) {
	dir := t.TempDir()
	if r := uxRun(t, dir, "init", "-no-encryption"); r.code != ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	certFile, keyFile, pool := selfSigned(t, dir)
	u := startUI(t, "-store", "local:"+filepath.Join(dir, "store"), "-tls-cert", certFile, "-tls-key", keyFile)
	if !strings.HasPrefix(u.addr, "https://") {
		t.Fatalf("address %s is not https", u.addr)
	}
	u.c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	u.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := u.c.Get(u.addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close() // only the headers matter
	if ck := res.Header.Get("Set-Cookie"); res.StatusCode != http.StatusSeeOther || !strings.Contains(ck, "Secure") {
		t.Errorf("login over TLS: %d, cookie %q", res.StatusCode, ck)
	}
	plain := "http://" + strings.TrimPrefix(u.base, "https://")
	if res, err := http.Get(plain); err == nil {
		_ = res.Body.Close() // only the status matters
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: %d, want 400", res.StatusCode)
		}
	}
}
