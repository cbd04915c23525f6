# The names a manual page's NAME section gives, one a line: the words
# before " \- ", with roff's \- undone.  Used by tests/man-names.sh and
# tests/man-examples.sh.
/^\.SH / { in_name = ($2 == "NAME"); next }
in_name { text = text " " $0 }
END {
	sub(/ \\- .*/, "", text)
	gsub(/\\-/, "-", text)
	n = split(text, names, /[ ,]+/)
	for (i = 1; i <= n; i++)
		if (names[i] != "")
			print names[i]
}
