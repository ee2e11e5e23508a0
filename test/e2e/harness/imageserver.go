package harness

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ulikunitz/xz"
)

// ImageServer is an Image Factory stand-in for the real importer: HTTPS on
// the importer network's host side, with a certificate from a CA of its own
// (trusted by nothing but what is given CAPEM), checking credentials, and
// serving one small Talos-shaped disk image, xz-compressed, at every
// /image/<schematic>/<version>/<platform>-<arch>.raw.xz.
type ImageServer struct {
	// URL is https://<host ip>:<port>, the catalog's imageFactoryURL.
	URL string
	// CAPEM is the PEM of the CA that issued the server's certificate.
	CAPEM []byte
	// Image is the .raw.xz served, RawSize the size of the raw disk in it.
	Image   []byte
	RawSize int
	// Checksum is "sha256:<hex>" of Image, what CDI's importer verifies
	// (pkg/importer/checksum.go hashes the bytes as they arrive).
	Checksum string

	opts   ImageServerOptions
	srv    *http.Server
	errLog *os.File
	ln     net.Listener
	// held are the connections of requests the server never answers.
	mu   sync.Mutex
	held []net.Conn
	// Requests counts the image requests, by answer ("200", "401",
	// "stalled").
	requests sync.Map
	total    atomic.Int64
}

// ImageServerOptions are what an ImageServer asks of a client.
type ImageServerOptions struct {
	// User and Password, when set, are required as HTTP basic
	// authentication (source.http.secretRef: accessKeyId, secretKey).
	User, Password string
	// Header and Token, when set, are a header every request must carry
	// with that value (a secretExtraHeaders Secret holding the line
	// "<Header>: <Token>"). With basic authentication the header cannot be
	// Authorization: CDI adds the extra headers first and then sets basic
	// authentication with Header.Set, which replaces them
	// (http-datasource.go createHTTPReader, addExtraheaders).
	Header, Token string
	// NoHeaders accepts every request and never sends response headers:
	// the connection stays open with nothing on it (CDI's HTTP client has
	// no response-header timeout, http-datasource.go createHTTPClient).
	NoHeaders bool
}

// StartImageServer starts an ImageServer on the importer network, with a
// fresh CA and image. It stops with Close.
func (cp *ControlPlane) StartImageServer(opts ImageServerOptions) (*ImageServer, error) {
	n, err := cp.ImporterNetwork()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cp.WorkDir, "image-server-")
	if err != nil {
		return nil, err
	}
	ca, caPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := ca.issueTo(certFile, keyFile, "factory.e2e.internal", nil, []net.IP{net.ParseIP(n.HostIP)}, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	raw := TalosShapedDisk(4 << 20)
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	ln, err := net.Listen("tcp", n.HostIP+":0")
	if err != nil {
		return nil, err
	}
	s := &ImageServer{
		URL: "https://" + ln.Addr().String(), CAPEM: caPEM, Image: buf.Bytes(), RawSize: len(raw),
		Checksum: "sha256:" + hex.EncodeToString(sum[:]), opts: opts, ln: ln,
	}
	// The server's own errors (the importers' failed TLS handshakes among
	// them) go to logs/image-server-<port>.log.
	errLog, err := os.Create(filepath.Join(cp.LogDir, fmt.Sprintf("image-server-%d.log", ln.Addr().(*net.TCPAddr).Port)))
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	s.errLog = errLog
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, ErrorLog: log.New(errLog, "", log.LstdFlags)}
	go func() { _ = s.srv.ServeTLS(ln, "", "") }()
	return s, nil
}

// TalosShapedDisk is a raw disk of size bytes laid out as a Talos disk
// image starts: a protective MBR (one partition of type 0xEE, the boot
// signature) and a GPT header ("EFI PART") at LBA 1; the rest is a
// repeating, compressible pattern, not zeros, so that the volume holds
// data where the disk has it.
func TalosShapedDisk(size int) []byte {
	b := make([]byte, size)
	for i := 1024; i < size; i++ {
		b[i] = byte(i/4096) ^ byte(i%251)
	}
	// Protective MBR: partition entry 1 at 446.
	b[446+4] = 0xEE
	binary.LittleEndian.PutUint32(b[446+8:], 1)
	binary.LittleEndian.PutUint32(b[446+12:], uint32(size/512-1))
	b[510], b[511] = 0x55, 0xAA
	// GPT header at LBA 1.
	copy(b[512:], "EFI PART")
	binary.LittleEndian.PutUint32(b[512+8:], 0x00010000)
	binary.LittleEndian.PutUint32(b[512+12:], 92)
	return b
}

// Requests returns how many image requests got answer ("200", "401",
// "404", "stalled").
func (s *ImageServer) Requests(answer string) int64 {
	v, ok := s.requests.Load(answer)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func (s *ImageServer) count(answer string) {
	v, _ := s.requests.LoadOrStore(answer, &atomic.Int64{})
	v.(*atomic.Int64).Add(1)
	s.total.Add(1)
}

func (s *ImageServer) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[0] != "image" || !strings.HasSuffix(parts[3], ".raw.xz") || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		s.count("404")
		http.NotFound(w, r)
		return
	}
	if s.opts.NoHeaders {
		s.count("stalled")
		// Take the connection and keep it open with nothing sent.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				s.mu.Lock()
				s.held = append(s.held, c)
				s.mu.Unlock()
				return
			}
		}
		<-r.Context().Done()
		return
	}
	if !s.authorized(r) {
		s.count("401")
		w.Header().Set("WWW-Authenticate", `Basic realm="image-factory"`)
		http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
		return
	}
	s.count("200")
	// No Accept-Ranges: the importer then streams the body through its
	// scratch space (http-datasource.go createHTTPReader, brokenForQemuImg)
	// whether or not nbdkit is installed.
	w.Header().Set("Content-Type", "application/x-xz")
	w.Header().Set("Content-Length", strconv.Itoa(len(s.Image)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(s.Image)
	}
}

// authorized reports whether r carries the credentials the server asks.
func (s *ImageServer) authorized(r *http.Request) bool {
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	if s.opts.Header != "" {
		ok := false
		for _, a := range r.Header.Values(s.opts.Header) {
			ok = ok || eq(strings.TrimSpace(a), s.opts.Token)
		}
		if !ok {
			return false
		}
	}
	if s.opts.User != "" {
		u, p, ok := r.BasicAuth()
		if !ok || !eq(u, s.opts.User) || !eq(p, s.opts.Password) {
			return false
		}
	}
	return true
}

// Total is the number of requests answered or held so far.
func (s *ImageServer) Total() int64 { return s.total.Load() }

// Close stops the server and drops the connections it held.
func (s *ImageServer) Close() {
	_ = s.srv.Close()
	_ = s.errLog.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.held {
		_ = c.Close()
	}
	s.held = nil
}

// String describes opts without the credentials, for logs.
func (o ImageServerOptions) String() string {
	return fmt.Sprintf("basic=%t header=%q noHeaders=%t", o.User != "", o.Header, o.NoHeaders)
}
