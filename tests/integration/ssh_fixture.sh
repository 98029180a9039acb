# An sshd and a repository to reach over ssh, for the tests of any TCP
# port by name (issue 31): tests/integration/enforce_transparent.sh and
# tests/e2e/anyport.sh.  Sourced, not run.
#
# ssh_fixture DIR ADDR: DIR/hostkey, DIR/userkey (its public half in
# DIR/authorized_keys), DIR/sshd_config for an sshd listening on ADDR:22
# that lets root in with that key only, and DIR/repo.git, a bare
# repository whose main branch has one commit (README: "over ssh").
# sshd's privilege separation folder, /run/sshd, is made when missing:
# ssh_made_run_sshd is then 1, and the caller's cleanup removes it.
ssh_made_run_sshd=
ssh_fixture() {
	local dir=$1 addr=$2

	ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$dir/userkey"
	cp "$dir/userkey.pub" "$dir/authorized_keys"
	cat >"$dir/sshd_config" <<SSHD
ListenAddress $addr:22
HostKey $dir/hostkey
PidFile none
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers root
SSHD
	[ -d /run/sshd ] || { mkdir -m 755 /run/sshd && ssh_made_run_sshd=1; }
	git init -q --bare "$dir/repo.git"
	git -C "$dir/repo.git" symbolic-ref HEAD refs/heads/main
	git init -q -b main "$dir/src"
	echo "over ssh" >"$dir/src/README"
	git -C "$dir/src" add README
	git -C "$dir/src" -c user.name=t -c user.email=t@t commit -qm one
	git -C "$dir/src" push -q "$dir/repo.git" main
	chmod -R a+rX "$dir/repo.git"
}

# ssh_listening ADDR [PREFIX...]: whether ADDR:22 listens, ss(8) run
# under PREFIX (ip netns exec NS) when given.
ssh_listening() {
	local addr=$1

	shift
	[[ $("$@" ss -ltn) == *"$addr:22 "* ]]
}
