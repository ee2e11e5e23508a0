package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// importerCase is one golden imported by CDI's own importer
// (cmd/cdi-importer v1.65.0, harness/importer.go) from an ImageServer, and
// what the catalog must report of it.
type importerCase struct {
	name string
	// server is what the server asks of the importer.
	server harness.ImageServerOptions
	// trustCA sets the catalog's spec.imageFactoryCA to the server's CA.
	trustCA bool
	// user and password are the secretRef Secret's accessKeyId and
	// secretKey; header and token the secretExtraHeaders Secret's line.
	user, password, header, token string
	// wrongChecksum sets images[0].checksum to another digest than the
	// served image's (else the right one).
	wrongChecksum bool
	// stallAfter, when set, is the Input's polling.stallAfter.imports on
	// a copy of the catalog's Composition.
	stallAfter string
	// secretLater: the secretRef Secret does not exist when the catalog
	// is created; it is created once the cause is reported, and the
	// import must then succeed by itself.
	secretLater bool

	// phase is the DataVolume phase CDI reaches (Succeeded, Failed), or ""
	// for one that keeps importing or restarting.
	phase string
	// reason is status.goldens[].reason ("" for a golden that succeeded)
	// and the GoldenImagesReady reason; message are substrings of the
	// golden's status message (CDI's own words among them).
	reason  string
	message []string
}

// The importer scenarios: CDI's real importer, run as the stand-in for its
// pod, against an HTTPS server on the importer network whose private CA
// only the catalog's imageFactoryCA trusts and which checks credentials.
// What CDI's importer reports for each failure (its termination message,
// which the import controller copies into the DataVolume's Running
// condition) flows into the catalog's status.goldens[].reason and message
// and its GoldenImagesReady condition.
func TestImporterRealCDIImporter(t *testing.T) {
	requireMode(t, "Catalog")
	const user, password, header, token = "e2e-factory", "pa55-w0rd-e2e", "X-Factory-Token", "t0ken-e2e-4711"
	cases := []importerCase{{
		// (a) CA, basic authentication and a header token, the right
		// checksum: CDI imports it through its scratch round.
		name:   "succeeds-with-ca-and-credentials",
		server: harness.ImageServerOptions{User: user, Password: password, Header: header, Token: token},
		user:   user, password: password, header: header, token: token, trustCA: true,
		phase: phaseSucceeded,
	}, {
		// (b) The server's CA is not the catalog's: x509 from the
		// importer's first request.
		name:   "untrusted-ca",
		server: harness.ImageServerOptions{User: user, Password: password},
		user:   user, password: password,
		reason:  "UntrustedCertificate",
		message: []string{"x509: certificate signed by unknown authority", "spec.imageFactoryCA"},
	}, {
		// (c) The Secret's password is not the server's: 401.
		name:   "refused-credentials",
		server: harness.ImageServerOptions{User: user, Password: password},
		user:   user, password: "not-" + password, trustCA: true,
		reason:  "Unauthorized",
		message: []string{"401", "spec.imageFactoryAuth"},
	}, {
		// (d) images[0].checksum is not the image's: CDI fails the
		// DataVolume for good.
		name:   "checksum-mismatch",
		server: harness.ImageServerOptions{User: user, Password: password},
		user:   user, password: password, trustCA: true, wrongChecksum: true,
		phase:   phaseFailed,
		reason:  "ChecksumMismatch",
		message: []string{"checksum mismatch", "images[0].checksum"},
	}, {
		// The secretRef Secret does not exist: the kubelet cannot create
		// the importer's container (its environment names the Secret's
		// keys), CDI copies CreateContainerConfigError into Running; once
		// the Secret is created the importer starts and the import
		// succeeds, with nothing deleted.
		name:   "credentials-secret-missing",
		server: harness.ImageServerOptions{User: user, Password: password},
		user:   user, password: password, trustCA: true, secretLater: true,
		phase:   phaseSucceeded,
		reason:  "CredentialsMissing",
		message: []string{"CreateContainerConfigError", "spec.imageFactoryAuth.secretRef"},
	}, {
		// (e) The server takes the request and never answers: the
		// importer waits without a timeout, the import does not move,
		// and the catalog reports it Stalled once the bound passes.
		name:       "server-sends-no-headers",
		server:     harness.ImageServerOptions{NoHeaders: true},
		trustCA:    true,
		stallAfter: "1m",
		reason:     "Stalled",
		message:    []string{"has not moved for at least 1m", "accepted the connection but sends nothing"},
	}}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { importerScenario(t, i, c) })
	}
}

func importerScenario(t *testing.T, i int, c importerCase) {
	start := time.Now()
	srv, err := cp.StartImageServer(c.server)
	if err != nil {
		t.Fatalf("cannot start the image server: %v", err)
	}
	t.Cleanup(srv.Close)
	name := "e2e-importer-" + c.name
	sid := schematicID("importer-" + c.name)
	golden := goldenName(sid)
	secret := func(n string, data map[string]string) string {
		if c.secretLater && strings.HasSuffix(n, "-basic") {
			return n
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: goldenNamespace}, StringData: data}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := cp.Kube.CoreV1().Secrets(goldenNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cp.Kube.CoreV1().Secrets(goldenNamespace).Delete(context.Background(), n, metav1.DeleteOptions{})
		})
		return n
	}
	spec := map[string]any{
		"goldenNamespace": goldenNamespace,
		"imageFactoryURL": srv.URL,
		"storage":         "2Gi",
	}
	if c.trustCA {
		spec["imageFactoryCA"] = string(srv.CAPEM)
	}
	auth := map[string]any{}
	if c.user != "" {
		auth["secretRef"] = secret(name+"-basic", map[string]string{"accessKeyId": c.user, "secretKey": c.password})
	}
	if c.header != "" {
		auth["secretExtraHeaders"] = []any{secret(name+"-token", map[string]string{"header": c.header + ": " + c.token})}
	}
	if len(auth) > 0 {
		spec["imageFactoryAuth"] = auth
	}
	checksum := srv.Checksum
	if c.wrongChecksum {
		checksum = "sha256:" + strings.Repeat("0f", 32)
	}
	spec["images"] = []any{map[string]any{"schematicID": sid, "version": talosVersion, "checksum": checksum}}
	if c.stallAfter != "" {
		spec["crossplane"] = map[string]any{"compositionRef": map[string]any{"name": compositionWith(t, harness.WorkerImageCatalog, fmt.Sprintf("e2e-importer-stall-%d", i), func(input map[string]any) error {
			return unstructured.SetNestedField(input, c.stallAfter, "polling", "stallAfter", "imports")
		})}}
	}
	xr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": harness.WorkerImageCatalog.GroupVersion().String(),
		"kind":       harness.WorkerImageCatalog.Kind,
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	dv := cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	if url, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "url"); !strings.HasPrefix(url, srv.URL+"/image/"+sid+"/"+talosVersion+"/") {
		t.Fatalf("golden DataVolume %s imports %q, not from the image server %s", golden, url, srv.URL)
	}

	if c.secretLater {
		waitGoldenCause(t, name, golden, c.reason, c.message, 2*time.Minute)
		c.secretLater = false
		secret(name+"-basic", map[string]string{"accessKeyId": c.user, "secretKey": c.password})
	}
	switch {
	case c.phase == phaseSucceeded:
		waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)
		cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "GoldenImagesReady", "True")
		waitGoldenReported(t, name, golden, phaseSucceeded, "100.0%")
		assertImportedDisk(t, golden, srv)
		if n := srv.Requests("401"); n != 0 {
			t.Errorf("the image server refused %d request(s) of a catalog with the right credentials", n)
		}
	case c.phase == phaseFailed:
		waitDataVolumePhase(t, goldenNamespace, golden, phaseFailed)
		fallthrough
	default:
		waitGoldenCause(t, name, golden, c.reason, c.message, 4*time.Minute)
		// The condition can trail status.goldens by a reconcile (one run
		// was seen with the golden's reason written and the condition
		// still Importing), so it is waited for, not read once.
		cp.Eventually(t, reconcileTimeout, fmt.Sprintf("catalog %s's GoldenImagesReady to be False with reason %s naming %s", name, c.reason, golden), func(ctx context.Context) error {
			u, err := cp.Existing(ctx, harness.WorkerImageCatalog, "", name)
			if err != nil {
				return err
			}
			if r := conditionReason(u, "GoldenImagesReady"); r != c.reason || harness.ConditionStatus(u, "GoldenImagesReady") != "False" {
				return fmt.Errorf("GoldenImagesReady reason %q, want %q (the golden's cause): %s", r, c.reason, harness.ConditionsString(u))
			}
			return nil
		})
	}
	if c.stallAfter != "" {
		// Reported within the bound: from the importer's request, which the
		// server holds, to Stalled, at most the bound plus the catalog's
		// reconcile (its in-progress TTL and the suite's).
		bound, _ := time.ParseDuration(c.stallAfter)
		if took := time.Since(start); took > bound+60*time.Second {
			t.Errorf("reported Stalled %s after the catalog was created, more than the %s bound plus 60 s", took.Round(time.Second), bound)
		}
		if srv.Requests("stalled") == 0 {
			t.Errorf("the image server held no request: the importer never reached it")
		}
	}
	// A credential never shows.
	u := cp.MustGet(t, harness.WorkerImageCatalog, "", name)
	if g, ok := goldenStatus(u, golden); ok {
		t.Logf("status.goldens[%s]: phase %v, restarts %v, reason %v, message %v", golden, g["phase"], g["restarts"], g["reason"], g["message"])
	}
	b, _ := yaml.Marshal(u.Object["status"])
	for _, secret := range []string{c.password, c.token, c.server.Password, c.server.Token} {
		if secret != "" && bytes.Contains(b, []byte(secret)) {
			t.Errorf("the catalog's status shows a credential:\n%s", b)
		}
	}
	t.Logf("%s: %s (image server: %s; %d image request(s): %d answered 200, %d refused 401, %d held)", c.name, time.Since(start).Round(time.Second), c.server, srv.Total(), srv.Requests("200"), srv.Requests("401"), srv.Requests("stalled"))
}

// waitGoldenCause waits until the catalog reports golden with reason and a
// message holding every substring.
func waitGoldenCause(t *testing.T, catalog, golden, reason string, message []string, timeout time.Duration) {
	t.Helper()
	cp.Eventually(t, timeout, fmt.Sprintf("catalog %s to report golden %s with reason %s", catalog, golden, reason), func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.WorkerImageCatalog, "", catalog)
		if err != nil {
			return err
		}
		g, ok := goldenStatus(u, golden)
		if !ok {
			return fmt.Errorf("status.goldens has no %s", golden)
		}
		msg, _ := g["message"].(string)
		if g["reason"] != reason {
			return fmt.Errorf("status.goldens[%s] is %v", golden, g)
		}
		for _, s := range message {
			if !strings.Contains(msg, s) {
				return fmt.Errorf("status.goldens[%s].message lacks %q: %s", golden, s, msg)
			}
		}
		return nil
	})
}

// conditionReason is the reason of u's condition typ.
func conditionReason(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			r, _ := m["reason"].(string)
			return r
		}
	}
	return ""
}

// assertImportedDisk checks that the golden's volume holds the raw disk
// the server compressed: the importer decompressed it into its scratch
// volume, converted it with qemu-img into /data/disk.img, and resized it
// to the volume.
func assertImportedDisk(t *testing.T, golden string, srv *harness.ImageServer) {
	t.Helper()
	d := readDiskImage(t, goldenNamespace, golden, srv.RawSize)
	if !bytes.Equal(d.Head, harness.TalosShapedDisk(srv.RawSize)) {
		t.Errorf("%s does not start with the raw disk the server compressed", d.Path)
	}
	if d.Size < int64(srv.RawSize) {
		t.Errorf("%s is %d bytes, smaller than the image", d.Path, d.Size)
	}
	t.Logf("golden %s: PV %s holds disk.img of %d bytes (the %d-byte raw disk, resized to the volume)", golden, d.Volume, d.Size, srv.RawSize)
}

// diskImage is the start of the disk.img a claim's directory-backed volume
// holds, as a VM would read it.
type diskImage struct {
	Path, Volume string
	Size         int64
	Head         []byte
}

// readDiskImage reads the first n bytes of the disk.img on the volume bound
// to claim ns/name, failing the test when there is none.
func readDiskImage(t *testing.T, ns, name string, n int) diskImage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pvc, err := cp.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := diskImage{Volume: pvc.Spec.VolumeName, Path: filepath.Join(harness.PVDir(cp.WorkDir, pvc.Spec.VolumeName), "disk.img")}
	f, err := os.Open(d.Path)
	if err != nil {
		t.Fatalf("claim %s/%s (PV %s) has no disk image: %v", ns, name, d.Volume, err)
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err == nil {
		d.Size = st.Size()
	}
	d.Head = make([]byte, n)
	if _, err := f.ReadAt(d.Head, 0); err != nil {
		t.Fatalf("%s (%d bytes): %v", d.Path, d.Size, err)
	}
	return d
}
