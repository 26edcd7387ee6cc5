package record

import "strings"

// ItemID names one work item everywhere: its suite's label and tag ("" for an opaque suite).
// Key is its weight key, Column its column in TE's files (docs/files.md).
type ItemID struct {
	Label string `json:"label"`
	Tag   string `json:"tag,omitempty"`
}

// Key is the weight key: "<label>/<tag>", or the label of an opaque item.
func (id ItemID) Key() string {
	if id.Tag == "" {
		return id.Label
	}
	return id.Label + "/" + id.Tag
}

// ParseItemID reads a weight key back: the label is everything before the first "/".
func ParseItemID(key string) ItemID {
	label, tag, _ := strings.Cut(key, "/")
	return ItemID{Label: label, Tag: tag}
}

// Whole is the item column of an opaque item.
const Whole = "whole"

// Column is the item's "item" column in TE's files: its tag, or Whole.
func (id ItemID) Column() string {
	if id.Tag == "" {
		return Whole
	}
	return id.Tag
}
