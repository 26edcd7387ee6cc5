// Package optname names a run's options the way the user of each face writes them,
// so an action user never reads a flag and a CLI user never an input.
package optname

// Face is the face whose user reads a message.
type Face int

const (
	// CLI names options as flags: --gpus, --gpus 0. The zero value.
	CLI Face = iota
	// Action names them as the action's inputs: input gpus, gpus: 0.
	Action
)

// Name is option (a settings knob name such as "gpus") as the face's user knows it.
func (f Face) Name(option string) string {
	if f == Action {
		return "input " + option
	}
	return "--" + option
}

// Given is option with the value it was given, leading an error about it.
func (f Face) Given(option, value string) string { return f.Name(option) + " " + value }

// Set is option given value as the face's user writes it, in a suggestion.
func (f Face) Set(option, value string) string {
	if f == Action {
		return option + ": " + value
	}
	return "--" + option + " " + value
}

// Enable is a boolean option switched on, in a suggestion.
func (f Face) Enable(option string) string {
	if f == Action {
		return option + ": true"
	}
	return "--" + option
}
