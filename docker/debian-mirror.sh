# Sourced by docker/job-image/build.sh and docker/build-images.sh: where this machine's apt sources say the
# Debian archive for $SUITE (set by the caller) and its security updates are. The images are built from
# that mirror, never from a registry.

# Prints "uri suite" for every enabled deb entry in the apt sources, deb822 and one-line formats.
apt_source_entries() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '
      function flush(  n, m, i, j, u, s) {
        if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
          n = split(uris, u, " "); m = split(suites, s, " ")
          for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j]
        }
        types = uris = suites = last = ""; enabled = "yes"
      }
      BEGIN { enabled = "yes" }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { if (last == "uris") uris = uris " " $0; else if (last == "suites") suites = suites " " $0; next }
      {
        key = tolower($1); value = $0; sub(/^[^:]*:[ \t]*/, "", value); last = ""
        if (key == "types:") types = value
        else if (key == "uris:") { uris = value; last = "uris" }
        else if (key == "suites:") { suites = value; last = "suites" }
        else if (key == "enabled:") enabled = value
      }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" {
      i = 2
      if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
      print $i, $(i + 1)
    }' "$f"
  done
}

# The mirror serving $SUITE: an entry for that suite, else any plain Debian archive entry.
find_mirror() {
  local entries
  entries=$(apt_source_entries)
  awk -v suite="$SUITE" '$2 == suite { print $1; exit }' <<<"$entries" | grep . \
    || awk '$2 !~ /-security$/ && $1 ~ /\/debian\/?$/ { print $1; exit }' <<<"$entries"
}

find_security_mirror() {
  apt_source_entries | awk '$2 ~ /-security$/ || $2 ~ /\/updates$/ { print $1; exit }'
}
