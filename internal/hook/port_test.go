package hook

import (
	"fmt"
	"strings"
	"testing"
)

func TestPortBase(t *testing.T) {
	for _, c := range []struct {
		given, env string
		want       int
		err        string
	}{
		{"", "", 29600, ""},
		{"", "31000", 31000, ""},
		{" 30000 ", "31000", 30000, ""},
		{"x", "", 0, `input port-base "x": want a port number from 1 to 65535`},
		{"", "-5", 0, `TE_CI_PORT_BASE "-5": want a port number`},
		{"70000", "", 0, `input port-base "70000"`},
	} {
		got, err := PortBase(c.given, "input port-base", c.env)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("PortBase(%q, %q) = %d, %v; want %d, %q", c.given, c.env, got, err, c.want, c.err)
		}
	}
}

func TestPorts(t *testing.T) {
	for _, c := range []struct {
		base int
		ids  []string
		want string // id:port …
		err  string
	}{
		{29600, []string{"0", "1", "2", "3"}, "0:29600 1:29601 2:29602 3:29603", ""},
		// TE's rule: the id, not the position (HIP_VISIBLE_DEVICES=4,5).
		{29600, []string{"4", "5"}, "4:29604 5:29605", ""},
		// Ids that are no numbers (MIG UUIDs; "01") go by position.
		{100, []string{"MIG-a", "MIG-b"}, "MIG-a:100 MIG-b:101", ""},
		{100, []string{"3", "MIG-b"}, "3:100 MIG-b:101", ""},
		{100, []string{"01", "1"}, "01:100 1:101", ""},
		{65534, []string{"0", "1", "2"}, "", "GPU 2 is port 65536, past 65535: give a lower input port-base (or TE_CI_PORT_BASE)"},
	} {
		ports, err := Ports(c.base, c.ids, "input port-base")
		var got []string
		for _, id := range c.ids {
			if p, ok := ports[id]; ok {
				got = append(got, fmt.Sprintf("%s:%d", id, p))
			}
		}
		if strings.Join(got, " ") != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("Ports(%d, %q) = %v, %v; want %q, %q", c.base, c.ids, got, err, c.want, c.err)
		}
	}
	if FirstGPU("4,5,6") != "4" || FirstGPU("2") != "2" {
		t.Error("FirstGPU")
	}
}
