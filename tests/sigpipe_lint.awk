# tests/sigpipe_lint.awk: the scanner of tests/sigpipe_lint.sh, which says
# what it flags and why.  Prints FILE:LINE: | READER for each pipe whose
# reader may leave before its writer is done.
#
# A line is read character by character with a stack of contexts: C the
# script's own code, X $(...), P (...), B `...`, S '...', Q $'...',
# D "...", V ${...}, A $((...)) or ((...)).  Pipes count in the code
# contexts only: in quotes they are text (another shell's script, a
# message), in ${...} a pattern, in arithmetic an or.  Here-documents are
# skipped to their delimiter.  The stack lives across lines, as quotes do.

FNR == 1 {
	sp = 1; st[1] = "C"
	pend = 0; doc = ""; docdash = 0; docnext = ""
}

# the reader of a pipe: the text after the | up to the next unquoted
# | ; & ) or comment
function reader(s,    i, c, q, out) {
	q = ""
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (q != "") {
			if (c == q)
				q = ""
		} else if (c == "\x27" || c == "\"") {
			q = c
		} else if (c ~ /[|;&)]/) {
			break
		} else if (c == "#" && (i == 1 || substr(s, i - 1, 1) ~ /[ \t]/)) {
			break
		}
		out = out c
	}
	return out
}

# grep options that stop at the first match(es): -q and -m in a cluster
# (up to the first letter that takes an argument), the long forms;
# nothing after --
function grep_stops(s,    n, w, i, k, ch) {
	n = split(s, w, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (w[i] == "--")
			return 0
		if (w[i] ~ /^--(quiet|silent|max-count)/)
			return 1
		if (w[i] !~ /^-[A-Za-z]/)
			continue
		for (k = 2; k <= length(w[i]); k++) {
			ch = substr(w[i], k, 1)
			if (ch == "q" || ch == "m")
				return 1
			if (ch ~ /[efABCdD]/ || ch !~ /[A-Za-z]/)
				break
		}
		if (w[i] ~ /^-[efABCdD]$/)
			i++
	}
	return 0
}

# consider(TEXT, LINE): TEXT follows a pipe on LINE, whose marker spares it
function consider(s, line,    r, cmd, args) {
	if (line ~ /#[ \t]*sigpipe-ok:[ \t]*[^ \t]/)
		return
	r = reader(s)
	sub(/^[ \t{]*/, "", r)
	while (r ~ /^(exec|command|[A-Za-z_][A-Za-z_0-9]*=[^ \t]*)[ \t]+/)
		sub(/^[^ \t]+[ \t]+/, "", r)
	cmd = r
	sub(/[ \t].*/, "", cmd)
	sub(/.*\//, "", cmd)
	args = substr(r, length(cmd) + 1)
	if (cmd == "head" || cmd == "read" ||
	    (cmd ~ /^[ef]?grep$/ && grep_stops(args)) ||
	    (cmd == "sed" && args ~ /(^|[;{}0-9$ \t\x27"])[qQ]([;} \t\x27"0-9]|$)/) ||
	    (cmd ~ /^[gm]?awk$/ && args ~ /(^|[^A-Za-z0-9_])exit([^A-Za-z0-9_]|$)/)) {
		gsub(/[ \t]+$/, "", r)
		printf "%s:%d: | %s\n", FILENAME, FNR, r
	}
}

function push(kind, n) {
	st[++sp] = kind
	depth[sp] = 0
	return n
}

# quoted(LINE, I, C, TOP): the next index when C at I belongs to a context
# that is not code (or opens a substitution), 0 when code must look at it
function quoted(line, i, c, top) {
	if (top == "S" || top == "Q") {
		if (c == "\x27")
			sp--
		else if (c == "\\" && top == "Q")
			return i + 2
		return i + 1
	}
	if (c == "\\")
		return i + 2
	if (top == "V" || top == "A") {
		if (c == (top == "V" ? "{" : "("))
			depth[sp]++
		else if (c == (top == "V" ? "}" : ")") && depth[sp]-- == 0) {
			sp--
			return i + (top == "A" ? 2 : 1)
		}
		return i + 1
	}
	if (c == "$" && substr(line, i + 1, 2) == "((")
		return push("A", i + 3)
	if (c == "$" && substr(line, i + 1, 1) == "(")
		return push("X", i + 2)
	if (c == "$" && substr(line, i + 1, 1) == "{")
		return push("V", i + 2)
	if (top == "D") {
		if (c == "\"")
			sp--
		else if (c == "`")
			push("B", 0)
		return i + 1
	}
	return 0
}

# heredoc(LINE, I): the index after <<DELIM, whose body starts on the next
# line; 0 when there is no delimiter
function heredoc(line, i,    r, d) {
	r = substr(line, i + 2)
	if (!match(r, /^-?[ \t]*[\\\x27"]?[A-Za-z_][A-Za-z_0-9]*[\x27"]?/))
		return 0
	d = substr(r, 1, RLENGTH)
	nextdash = d ~ /^-/
	sub(/^-?[ \t]*[\\\x27"]?/, "", d)
	sub(/[\x27"]$/, "", d)
	docnext = d
	return i + 2 + RLENGTH
}

# pipe(LINE, I): the | at I (not || or >|) and its reader, here or on the
# next line; the index after it
function pipe(line, i,    nx, j, r) {
	nx = substr(line, i + 1, 1)
	if (nx == "|")
		return i + 2
	if (i > 1 && substr(line, i - 1, 1) == ">")
		return i + 1
	j = i + (nx == "&" ? 2 : 1)
	r = substr(line, j)
	if (r ~ /^[ \t]*(\\[ \t]*)?$/ || r ~ /^[ \t]*#/)
		pend = 1
	else
		consider(r, line)
	return j
}

# code(LINE, I, C, TOP): the next index for C at I in code; 0 at a comment
function code(line, i, c, top,    h) {
	if (c == "#" && (i == 1 || substr(line, i - 1, 1) ~ /[ \t;&|()]/))
		return 0
	if (c == "$" && substr(line, i + 1, 1) == "\x27")
		return push("Q", i + 2)
	if (c == "\x27")
		return push("S", i + 1)
	if (c == "\"")
		return push("D", i + 1)
	if (c == "`") {
		if (top == "B")
			sp--
		else
			push("B", 0)
		return i + 1
	}
	if (c == "(" && substr(line, i + 1, 1) == "(")
		return push("A", i + 2)
	if (c == "(")
		return push("P", i + 1)
	if (c == ")" && (top == "X" || top == "P"))
		sp--
	if (c == "<" && substr(line, i + 1, 2) ~ /^<[^<]?$/ &&
	    (h = heredoc(line, i)) > 0)
		return h
	if (c == "|")
		return pipe(line, i)
	return i + 1
}

{
	line = $0
	if (doc != "") {
		t = line
		if (docdash)
			sub(/^\t*/, "", t)
		if (t == doc)
			doc = ""
		next
	}
	if (pend && st[sp] != "S" && st[sp] != "D" && line !~ /^[ \t]*(#.*)?$/) {
		pend = 0
		consider(line, line)
	}
	for (i = 1; i <= length(line); i = n) {
		c = substr(line, i, 1)
		n = quoted(line, i, c, st[sp])
		if (n == 0 && (n = code(line, i, c, st[sp])) == 0)
			break
	}
	if (docnext != "") {
		doc = docnext
		docdash = nextdash
		docnext = ""
	}
}
