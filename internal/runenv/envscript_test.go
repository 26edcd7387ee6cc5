package runenv

import (
	"slices"
	"testing"

	"github.com/rocm/sgpu-queue/internal/hook"
)

func TestExportedBy(t *testing.T) {
	given := hook.Env{"PATH=/bin", "TEST_LEVEL=3", "KEEP=same", "CHANGE=old", "PWD=/repo"}
	tests := []struct {
		name          string
		after         []string
		vars, ignored []string
	}{
		{"nothing exported", []string{"PATH=/bin", "TEST_LEVEL=3", "KEEP=same", "CHANGE=old"}, nil, nil},
		{"new and changed, in order", []string{"PATH=/bin", "CI=1", "CHANGE=new", "TE_PATH=/repo/"},
			[]string{"CI=1", "CHANGE=new", "TE_PATH=/repo/"}, nil},
		{"empty is a value", []string{"EMPTY="}, []string{"EMPTY="}, nil},
		{"a value with newlines and =", []string{"M=a\nb=c"}, []string{"M=a\nb=c"}, nil},
		{"the shell's own and the marks are not the script's",
			[]string{"PWD=/repo/ci", "OLDPWD=/repo", "SHLVL=2", "_=/usr/bin/env", "SGPU_QUEUE_MARK_1f_7=1", "X=1"}, []string{"X=1"}, nil},
		{"malformed entries", []string{"", "NOEQUALS", "1BAD=x", "BAD NAME=x", "OK=1"}, []string{"OK=1"}, nil},
		{"what the tool sets per command keeps the tool's value",
			[]string{"HIP_VISIBLE_DEVICES=3", "CUDA_VISIBLE_DEVICES=3", "TEST_FILTER=x", "TEST_LEVEL=1", "PET_MASTER_PORT=1", "JUNITXML_PREFIX=/j/", "Y=2"},
			[]string{"Y=2"},
			[]string{"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "TEST_FILTER", "TEST_LEVEL", "PET_MASTER_PORT", "JUNITXML_PREFIX"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, ignored := ExportedBy(given, tt.after, hook.Default())
			if !slices.Equal(vars, tt.vars) || !slices.Equal(ignored, tt.ignored) {
				t.Errorf("ExportedBy = %q, ignored %q; want %q, ignored %q", vars, ignored, tt.vars, tt.ignored)
			}
		})
	}
}

func TestEnvScriptShell(t *testing.T) {
	for script, want := range map[string]string{
		"DIR=$PWD/ci; . ci/_utils.sh":          "sh",
		"#!/bin/bash\n. ci/_utils.sh":          "/bin/bash",
		"#! /usr/bin/env bash\nexport A=1":     "bash",
		"#!/usr/bin/env\nexport A=1":           "/usr/bin/env",
		"#!\nexport A=1":                       "sh",
		"export A=1\n#!/bin/bash":              "sh",
		"#!/bin/zsh -e\nexport A=1":            "/bin/zsh",
		"  #!/bin/bash (not the first column)": "sh",
	} {
		if got := EnvScriptShell(script); got != want {
			t.Errorf("EnvScriptShell(%q) = %q, want %q", script, got, want)
		}
	}
}
