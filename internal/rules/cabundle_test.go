package rules

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testCA is a throwaway self-signed CA made for the test.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// The chart's cases (packages/apps/kubernetes/tests/talos_image_factory_ca_test.yaml
// @5bb2dd5), re-expressed for the rule.
func TestCABundle(t *testing.T) {
	ca := testCA(t)
	key := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEexample\n-----END EC PRIVATE KEY-----\n"
	cases := map[string]struct {
		reason string
		v      string
		want   string // "" admitted; else a substring of the refusal
		bundle string
	}{
		"Unset":             {"Unset is no bundle.", "", "", ""},
		"WhitespaceOnly":    {"treats a whitespace-only value as unset rather than rendering an empty bundle", "  \n  ", "", ""},
		"OneCertificate":    {"renders the CA when the field is set", ca, "", strings.TrimSpace(ca)},
		"Chain":             {"accepts a chain of more than one certificate", ca + ca, "", strings.TrimSpace(ca + ca)},
		"PrivateKey":        {"refuses a private key", key, "must not contain private key material", ""},
		"CertificateAndKey": {"refuses a certificate bundle that also carries a private key", ca + key, "must not contain private key material", ""},
		"NotACertificate":   {"refuses input that is not a certificate", "this is not a certificate at all", "complete PEM certificate blocks", ""},
		"NoClosingLine":     {"refuses certificate armour with no closing line", "-----BEGIN CERTIFICATE-----\nMIIB\n", "complete PEM certificate blocks", ""},
		"TrailingGarbage":   {"refuses text after the certificates", ca + "junk", "block 2 is not one", ""},
		"NotX509":           {"A base64 body that is no certificate fails here, not at import time.", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", "does not parse", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := CABundle(field.NewPath("talos", "imageFactoryCA"), tc.v)
			msg := errs.ToAggregate()
			switch {
			case tc.want == "" && msg != nil:
				t.Errorf("%s\nwant admitted, got %v", tc.reason, msg)
			case tc.want != "" && (msg == nil || !strings.Contains(msg.Error(), tc.want)):
				t.Errorf("%s\nwant a refusal containing %q, got %v", tc.reason, tc.want, msg)
			case tc.want == "" && got != tc.bundle:
				t.Errorf("%s\nbundle = %q, want %q", tc.reason, got, tc.bundle)
			}
		})
	}
}
