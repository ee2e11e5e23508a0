package read

// reqStorageCapacities are the CSIStorageCapacity objects of every driver,
// in every namespace: a driver publishes them in its own namespace, and
// only their storageClassName says which class they are of.
const ReqStorageCapacities = "csistoragecapacities"
