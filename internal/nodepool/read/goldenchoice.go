package read

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// A catalog keeps one golden per (schematicID, version, architecture): the
// unsuffixed talos-worker-<schematicID>-<version> of the architecture it was
// made with, talos-worker-<schematicID>-<version>-<arch> for every other
// (talosimage.GoldenNames). A pool of the Input's architecture clones the
// unsuffixed golden, as it always has, and asks for nothing more; a pool of
// another architecture asks for both candidates by name and clones the one
// of its architecture.
//
// A catalog that keeps the image on several StorageClasses has one golden
// per class too: talosimage.GoldenClassName on every class but the first.
// A pool that declares its class asks for that name and clones it when it
// exists, so its disks clone on their own class; otherwise it clones the
// golden of its architecture, and the class gate (decide/gate.go) holds it when
// that golden lives on another class.
const (
	reqArchGolden     = "golden-arch"
	reqArchGoldenBase = "golden-arch-base"
	reqClassGolden    = "golden-class"
)

// Candidate is what the pool knows of one golden it may clone.
type Candidate struct {
	Exists bool
	// Arch is the architecture its source URL names; "" when unknown.
	Arch string
}

// GoldenChoice is the golden a pool of arch clones, and what the catalog
// holds when it has none of that architecture.
type GoldenChoice struct {
	Arch string
	// Name is the golden to clone; while Missing, the suffixed name the
	// catalog would give it.
	Name    string
	Missing bool
	// Base is the unsuffixed golden, which Missing explains.
	Base Candidate
}

// ChooseGolden picks the golden of arch among the two candidates: its own
// suffixed golden when it exists, else the unsuffixed one when that was made
// with arch. A pool of the Input's architecture (ownArch) clones the
// unsuffixed golden unless its URL names another architecture: a golden
// whose URL says nothing was made before architectures and is the Input's.
func ChooseGolden(base, arch string, inputArch bool, suffixed, unsuffixed Candidate) GoldenChoice {
	c := GoldenChoice{Arch: arch, Name: base + "-" + arch, Base: unsuffixed}
	switch {
	case suffixed.Exists:
	case unsuffixed.Exists && (unsuffixed.Arch == arch || unsuffixed.Arch == "" && inputArch):
		c.Name = base
	case inputArch && !unsuffixed.Exists:
		// The golden pools have always cloned; its absence is the golden
		// gate's (GoldenMissing).
		c.Name = base
	default:
		c.Missing = true
	}
	return c
}

// candidateOf reads a golden DataVolume asked for by name.
func candidateOf(items []*unstructured.Unstructured, namespace, name string) Candidate {
	for _, u := range items {
		if !Is(u, namespace, name) {
			continue
		}
		c := Candidate{Exists: true}
		if dv, err := observed.DataVolume(u); err == nil && dv.Spec.Source != nil && dv.Spec.Source.HTTP != nil {
			c.Arch = talosimage.ArchitectureOf(dv.Spec.Source.HTTP.URL)
		}
		return c
	}
	return Candidate{}
}

// ChooseGoldenOf is the pool's golden choice: the golden of its class
// when the catalog keeps one (chooseClass); else for a pool of another
// architecture, from the candidates the request carries (peek); for one of
// the Input's, the unsuffixed golden, checked once it is read (Read, CheckedChoice).
func ChooseGoldenOf(img pool.Image, cfg config.Config, poolClass, running string, peek func(string) []*unstructured.Unstructured) GoldenChoice {
	base := img.GoldenName
	var c GoldenChoice
	if !OtherArch(img, cfg) {
		c = GoldenChoice{Arch: img.Arch.Value, Name: base}
	} else {
		var suffixed, unsuffixed []*unstructured.Unstructured
		if peek != nil {
			suffixed, unsuffixed = peek(reqArchGolden), peek(reqArchGoldenBase)
		}
		own := base + "-" + img.Arch.Value
		c = ChooseGolden(base, img.Arch.Value, false, candidateOf(suffixed, img.GoldenNamespace, own), candidateOf(unsuffixed, img.GoldenNamespace, base))
	}
	if poolClass == "" {
		return c
	}
	var classed []*unstructured.Unstructured
	if peek != nil {
		classed = peek(reqClassGolden)
	}
	name := ClassGoldenName(img, poolClass)
	return ChooseClass(c, name, candidateOf(classed, img.GoldenNamespace, name).Exists, running)
}

// ChooseClass picks the golden of the pool's class, name, over the golden
// of its architecture (c) when the catalog keeps it (exists). A pool whose
// running template clones c's golden keeps it: moving to the class's
// golden would roll every worker, which the pool's owner did not ask for
// (a pool on the copy path, or one that ran before the catalog listed its
// class); its next image does clone its class's golden, since that is a
// new choice.
func ChooseClass(c GoldenChoice, name string, exists bool, running string) GoldenChoice {
	if running == name || exists && running != c.Name {
		return GoldenChoice{Arch: c.Arch, Name: name}
	}
	return c
}

// ClassGoldenName is the golden of the pool's image, architecture and class
// on a class that is not its catalog's first (talosimage.GoldenClassName).
func ClassGoldenName(img pool.Image, class string) string {
	return talosimage.GoldenClassName(img.SchematicID.Value, img.Version.Value, img.Arch.Value, class)
}

// OtherArch reports a clone pool of another architecture than the Input's.
func OtherArch(img pool.Image, cfg config.Config) bool {
	return img.Source == pool.SourceClone && img.Arch.Value != cfg.Arch
}

// CheckedChoice is the choice of a pool of the Input's architecture once its
// golden is read: Missing when the golden's URL names another architecture.
// A pool of another architecture chose from its URL already.
func CheckedChoice(c GoldenChoice, dv *cdiv1.DataVolume) GoldenChoice {
	if c.Missing || dv == nil || dv.Name != c.Name || dv.Spec.Source == nil || dv.Spec.Source.HTTP == nil {
		return c
	}
	if a := talosimage.ArchitectureOf(dv.Spec.Source.HTTP.URL); a != "" && a != c.Arch {
		c.Missing, c.Base = true, Candidate{Exists: true, Arch: a}
	}
	return c
}
