// Package capacity predicts whether the clones a pool is about to start fit
// in the free capacity the cluster publishes for their StorageClass.
//
// A clone's transient peak is the clone of the golden plus the disk it is
// grown to, on every replica the class keeps: LINSTOR places the clone
// beside the source and resizes it afterwards (LINBIT/linstor-server #487),
// and cozystack's own e2e had to grow its pool after such a resize hit "not
// enough free space". What is free comes from CSIStorageCapacity objects
// (storage.k8s.io/v1), which an external-provisioner publishes per class and
// topology segment when its CSIDriver sets storageCapacity; a driver that
// publishes none leaves the capacity unknown, and nothing is held for it.
package capacity

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// LINSTOR's CSI driver and the parameters that set its replica count
// (piraeusdatastore/linstor-csi pkg/volume/parameter.go NewParameters: the
// key is matched without case, with or without the driver's prefix;
// autoPlace is the legacy name of placementCount; an empty value is 1, and
// nodeList/clientList place the volume by hand instead).
const (
	ProvisionerLINSTOR = "linstor.csi.linbit.com"
	linstorPrefix      = ProvisionerLINSTOR + "/"
)

// Replicas is how many copies of a volume the class keeps, and where that
// number comes from. Provisioners it does not know keep one as far as
// Kubernetes can tell (Ceph RBD's replication is the pool's, not the
// class's).
func Replicas(sc *storagev1.StorageClass) (int32, string) {
	if sc == nil || sc.Provisioner != ProvisionerLINSTOR {
		return 1, "its provisioner names no replica count"
	}
	n, from := int32(1), "LINSTOR's default placementCount"
	var nodes int
	// In key order: a class that sets both names gets one answer on every
	// call (linstor-csi itself takes whichever its map yields last).
	for _, k := range slices.Sorted(maps.Keys(sc.Parameters)) {
		v := sc.Parameters[k]
		key := strings.ToLower(strings.TrimPrefix(k, linstorPrefix))
		if strings.Contains(key, "/") {
			continue
		}
		switch key {
		case "placementcount", "autoplace":
			if v == "" {
				v = "1"
			}
			if c, err := strconv.ParseInt(v, 10, 32); err == nil && c > 0 {
				n, from = int32(c), "the class's parameter "+k
			}
		case "nodelist":
			nodes = len(strings.Fields(v))
		}
	}
	if nodes > 0 {
		return int32(nodes), "the class's nodeList"
	}
	return n, from
}

// Published is the free capacity published for one class.
type Published struct {
	// Known is false when no CSIStorageCapacity names the class.
	Known bool
	// Free is the sum of every segment's capacity.
	Free resource.Quantity
	// Segments is how many objects were summed.
	Segments int
	// LargestVolume is the largest volume one segment takes: its
	// maximumVolumeSize, or its capacity where it publishes none (as the
	// scheduler compares, volumebinding capacitySufficient); zero when no
	// segment publishes either.
	LargestVolume resource.Quantity
}

// Of sums the capacity published for class.
func Of(class string, objs []storagev1.CSIStorageCapacity) Published {
	var p Published
	for _, c := range objs {
		if c.StorageClassName != class || class == "" {
			continue
		}
		p.Known = true
		p.Segments++
		if c.Capacity != nil {
			p.Free.Add(*c.Capacity)
		}
		// A segment without maximumVolumeSize takes a volume up to its
		// capacity: another segment's smaller maximum must not make a disk
		// it takes fit nowhere.
		m := c.MaximumVolumeSize
		if m == nil {
			m = c.Capacity
		}
		if m != nil && m.Cmp(p.LargestVolume) > 0 {
			p.LargestVolume = m.DeepCopy()
		}
	}
	return p
}

// Prediction is what the clones about to start need and whether they fit.
type Prediction struct {
	// Known is false when the class's free capacity is not published.
	Known bool
	// PerClone is (disk + golden) × replicas.
	PerClone resource.Quantity
	// Replicas and ReplicasFrom say how many copies the class keeps.
	Replicas     int32
	ReplicasFrom string
	// Starting are the clones asked for; Fit how many of them fit.
	Starting, Fit int32
	// Need is Starting × PerClone; Free what is published.
	Need, Free resource.Quantity
	// TooLarge is true when one disk is larger than any segment takes
	// (its maximumVolumeSize, else its capacity): no clone fits, whatever
	// the sum.
	TooLarge bool
}

// Headroom is what stays free after the clones that fit start.
func (p Prediction) Headroom() resource.Quantity {
	h := p.Free.DeepCopy()
	used := p.PerClone.DeepCopy()
	used.Mul(int64(p.Fit))
	h.Sub(used)
	return h
}

// Predict computes how many of starting clones of a golden of size golden
// into disks of size disk fit on the class.
func Predict(starting int32, disk, golden resource.Quantity, replicas int32, replicasFrom string, pub Published) Prediction {
	per := disk.DeepCopy()
	per.Add(golden)
	per.Mul(int64(max(replicas, 1)))
	p := Prediction{Known: pub.Known, PerClone: per, Replicas: replicas, ReplicasFrom: replicasFrom, Starting: starting, Fit: starting, Free: pub.Free}
	p.Need = per.DeepCopy()
	p.Need.Mul(int64(starting))
	if !pub.Known || starting <= 0 {
		return p
	}
	if !pub.LargestVolume.IsZero() && disk.Cmp(pub.LargestVolume) > 0 {
		p.TooLarge, p.Fit = true, 0
		return p
	}
	if per.Sign() <= 0 {
		return p
	}
	fit := pub.Free.Value() / per.Value()
	p.Fit = int32(min(fit, int64(starting)))
	return p
}
