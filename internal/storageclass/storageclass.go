// Package storageclass decides which StorageClass a disk that names none
// lands on, as CDI does: the virtualization default, else the Kubernetes GA
// default, never the beta annotation (pkg/controller/common/util.go
// getFallbackStorageClass, GetPlatformDefaultStorageClass, CDI v1.64-v1.66;
// docs/cdi-behaviour.md). The clone gate compares a pool's class with its
// golden's only after resolving both this way.
package storageclass

import (
	storagev1 "k8s.io/api/storage/v1"
)

// Default-class annotations, strongest first.
const (
	// AnnVirtDefault marks the virtualization default class; CDI prefers it
	// for VM disks.
	AnnVirtDefault = "storageclass.kubevirt.io/is-default-virt-class"
	// AnnDefault is the Kubernetes (GA) default-class annotation.
	AnnDefault = "storageclass.kubernetes.io/is-default-class"
	// AnnBetaDefault is the deprecated beta annotation CDI never reads, named
	// so callers can say why a class carrying only it is no default.
	AnnBetaDefault = "storageclass.beta.kubernetes.io/is-default-class"
)

// Choice is the class a disk without one binds to, and the annotation that
// made it the default. Both are empty when no class is marked default.
type Choice struct {
	Name       string
	Annotation string
}

// Default returns the newest class marked "true" as the virtualization
// default, else the newest GA default; equal times fall back to name
// order, as in CDI.
func Default(classes []storagev1.StorageClass) Choice {
	return defaultBy(classes, AnnVirtDefault, AnnDefault)
}

// KubernetesDefault returns the newest GA default class (never the
// virtualization default), which CDI's
// GetStorageClassByNameWithK8sFallback (pkg/controller/common/util.go,
// v1.65.0) picks for a classless claim when the clone planner looks up its
// snapshot class (clone/common.go getSnapshotClassForClaim).
func KubernetesDefault(classes []storagev1.StorageClass) Choice {
	return defaultBy(classes, AnnDefault)
}

// defaultBy is the newest class carrying the first of anns that any class
// carries with the value "true".
func defaultBy(classes []storagev1.StorageClass, anns ...string) Choice {
	for _, ann := range anns {
		var best *storagev1.StorageClass
		for i := range classes {
			sc := &classes[i]
			if sc.Annotations[ann] != "true" {
				continue
			}
			if best == nil || newer(sc, best) {
				best = sc
			}
		}
		if best != nil {
			return Choice{Name: best.Name, Annotation: ann}
		}
	}
	return Choice{}
}

// newer reports whether a was created after b; equal times prefer the
// lexically smaller name.
func newer(a, b *storagev1.StorageClass) bool {
	at, bt := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !at.Equal(bt) {
		return at.After(bt)
	}
	return a.Name < b.Name
}
