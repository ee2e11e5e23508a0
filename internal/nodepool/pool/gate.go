package pool

// Class is a resolved StorageClass and where it came from.
type Class struct {
	Name string
	// From says where Name came from, for messages.
	From string
	// Default is set when Name is today's default class.
	Default bool
}
