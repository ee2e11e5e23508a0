package harness

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the throwaway certificate authority of one run and every file the
// processes read from it. All certificates are issued for 127.0.0.1 only.
type PKI struct {
	Dir string

	CACert string

	APIServerCert string
	APIServerKey  string

	// ServiceAccountKey signs and verifies service-account tokens.
	ServiceAccountKey string
	ServiceAccountPub string

	// TokenFile is the kube-apiserver static token file; Token is its one
	// token, bound to system:masters.
	TokenFile string
	Token     string

	// FunctionCertsDir holds ca.crt, tls.crt and tls.key of the function's
	// gRPC server (--tls-certs-dir).
	FunctionCertsDir string
	// CrossplaneCertsDir holds ca.crt, tls.crt and tls.key of the client
	// certificate Crossplane presents to functions (--tls-client-certs-dir).
	CrossplaneCertsDir string
	// CrossplaneWebhookCertsDir holds tls.crt and tls.key (the names
	// controller-runtime's webhook server loads from its CertDir) of the
	// serving certificate of Crossplane's webhook server
	// (--tls-server-certs-dir), issued for IP 127.0.0.1, plus ca.crt. The
	// webhook configurations carry CAData() as their caBundle, so the
	// kube-apiserver verifies this certificate against the run's CA.
	CrossplaneWebhookCertsDir string

	caPEM []byte
}

type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// NewPKI generates the run's CA and certificates under dir.
func NewPKI(dir string) (*PKI, error) {
	p := &PKI{
		Dir:                dir,
		CACert:             filepath.Join(dir, "ca.crt"),
		APIServerCert:      filepath.Join(dir, "apiserver.crt"),
		APIServerKey:       filepath.Join(dir, "apiserver.key"),
		ServiceAccountKey:  filepath.Join(dir, "sa.key"),
		ServiceAccountPub:  filepath.Join(dir, "sa.pub"),
		TokenFile:          filepath.Join(dir, "tokens.csv"),
		FunctionCertsDir:   filepath.Join(dir, "function"),
		CrossplaneCertsDir: filepath.Join(dir, "crossplane"),

		CrossplaneWebhookCertsDir: filepath.Join(dir, "crossplane-webhook"),
	}
	for _, d := range []string{dir, p.FunctionCertsDir, p.CrossplaneCertsDir, p.CrossplaneWebhookCertsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}

	ca, caPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	p.caPEM = caPEM
	if err := os.WriteFile(p.CACert, caPEM, 0o600); err != nil {
		return nil, err
	}

	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	if err := ca.issueTo(p.APIServerCert, p.APIServerKey, "kube-apiserver", []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, loopback, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	// The function's replicas (replicas.go) serve on two loopback
	// addresses under one name.
	replicas := append(loopback, net.ParseIP(FunctionReplicaIP))
	if err := ca.issueTo(filepath.Join(p.FunctionCertsDir, "tls.crt"), filepath.Join(p.FunctionCertsDir, "tls.key"), "function-worker-image", []string{"localhost", FunctionReplicasHost}, replicas, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	if err := ca.issueTo(filepath.Join(p.CrossplaneCertsDir, "tls.crt"), filepath.Join(p.CrossplaneCertsDir, "tls.key"), "crossplane", nil, nil, x509.ExtKeyUsageClientAuth); err != nil {
		return nil, err
	}
	// The kube-apiserver dials the webhook at https://127.0.0.1:<port>, so
	// the certificate must carry IP SAN 127.0.0.1 (Go's verifier, which
	// the apiserver uses, ignores the common name).
	if err := ca.issueTo(filepath.Join(p.CrossplaneWebhookCertsDir, "tls.crt"), filepath.Join(p.CrossplaneWebhookCertsDir, "tls.key"), "crossplane-webhook", []string{"localhost"}, loopback, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	for _, d := range []string{p.FunctionCertsDir, p.CrossplaneCertsDir, p.CrossplaneWebhookCertsDir} {
		if err := os.WriteFile(filepath.Join(d, "ca.crt"), caPEM, 0o600); err != nil {
			return nil, err
		}
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(p.ServiceAccountKey, saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.ServiceAccountPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return nil, err
	}

	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	p.Token = hex.EncodeToString(token)
	if err := os.WriteFile(p.TokenFile, []byte(fmt.Sprintf("%s,e2e-admin,e2e-admin,system:masters\n", p.Token)), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// CAData is the PEM of the CA certificate, for kubeconfigs and clients.
func (p *PKI) CAData() []byte { return p.caPEM }

// NewCACertificate returns the PEM of a fresh self-signed CA certificate,
// for a scenario that publishes a cluster's CA (the Join facts' Talos and
// Kubernetes CAs): a real certificate, which the function checks it is.
func NewCACertificate() ([]byte, error) {
	_, pemBytes, err := newCA()
	return pemBytes, err
}

func newCA() (*issuer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "function-worker-image-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return &issuer{cert: cert, key: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func (ca *issuer) issueTo(certPath, keyPath, cn string, dns []string, ips []net.IP, usage x509.ExtKeyUsage) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}
