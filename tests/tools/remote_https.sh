# The HTTPS part of tests/integration/remote.sh, sourced by it (its
# containers, S, C, wait_count, has...): docs/OPERATIONS.md's set-up checked with
# the environment's TLS (openssl, curl, journal-remote's certificates).
# ---- HTTPS, set up as docs/OPERATIONS.md says ----
# A CA, the collector's certificate for its address, the sender's, and a
# self-signed one the CA never saw. What Debian 12's pair checks: the sender
# takes only a collector whose certificate the CA signed. The collector
# cannot check senders (its journal-remote is built without GnuTLS:
# "--trust is not available"), so docs/OPERATIONS.md limits who may connect with
# IPAddressAllow= on the socket, checked last.
tls() { openssl "$@" >/dev/null 2>&1; }
EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2)
tls req -x509 "${EC[@]}" -keyout "$TMP/ca.key" -out "$TMP/ca.pem" -subj /CN=tracerd-test-ca &&
tls req "${EC[@]}" -keyout "$TMP/remote.key" -out "$TMP/remote.csr" -subj /CN=collector &&
tls x509 -req -in "$TMP/remote.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial -days 2 \
	-out "$TMP/remote.pem" -extfile <(printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$CADDR") &&
tls req "${EC[@]}" -keyout "$TMP/upload.key" -out "$TMP/upload.csr" -subj /CN=sender &&
tls x509 -req -in "$TMP/upload.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial -days 2 \
	-out "$TMP/upload.pem" -extfile <(printf 'extendedKeyUsage=clientAuth\n') &&
tls req -x509 "${EC[@]}" -keyout "$TMP/rogue.key" -out "$TMP/rogue.pem" -subj /CN=rogue
check "https: a CA, the collector's and the sender's certificates (openssl)" [ -s "$TMP/rogue.pem" ]
# put WHO FILE MODE GROUP DEST
put() { "$1" sh -c "cat >$5 && chmod $3 $5 && chgrp $4 $5" <"$2"; }
C mkdir -p /etc/ssl/private /etc/ssl/certs
put C "$TMP/remote.key" 0640 systemd-journal-remote /etc/ssl/private/journal-remote.key
put C "$TMP/remote.pem" 0644 root /etc/ssl/certs/journal-remote.pem
C sh -c "cat >/etc/systemd/journal-remote.conf" <<EOF
[Remote]
SplitMode=host
ServerKeyFile=/etc/ssl/private/journal-remote.key
ServerCertificateFile=/etc/ssl/certs/journal-remote.pem
EOF
# Back to the package's unit: --listen-https=-3.
C rm /etc/systemd/system/systemd-journal-remote.service.d/50-http.conf
C systemctl daemon-reload
C systemctl stop systemd-journal-remote.socket systemd-journal-remote.service
check "https: the collector listens with the package's unit" C systemctl start systemd-journal-remote.socket
# journal-upload is a dynamic user in group systemd-journal.
S mkdir -p /etc/ssl/private /etc/ssl/certs
put S "$TMP/upload.key" 0640 systemd-journal /etc/ssl/private/journal-upload.key
put S "$TMP/upload.pem" 0644 root /etc/ssl/certs/journal-upload.pem
put S "$TMP/ca.pem" 0644 root /etc/ssl/certs/journal-ca.pem
put S "$TMP/rogue.pem" 0644 root /root/rogue.pem
S sh -c "cat >/etc/systemd/journal-upload.conf" <<EOF
[Upload]
URL=https://$CADDR:19532
ServerKeyFile=/etc/ssl/private/journal-upload.key
ServerCertificateFile=/etc/ssl/certs/journal-upload.pem
TrustedCertificateFile=/etc/ssl/certs/journal-ca.pem
EOF
check "https: journal-upload restarts with docs/OPERATIONS.md's journal-upload.conf" S systemctl restart systemd-journal-upload
HPID=$("$FIRE" 100 | cut -d' ' -f1)
m=$(wait_count remote 100 TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$HPID")
sleep 0.5
m=$(count remote TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$HPID")
note "https: journal-upload $(S systemctl show -p ActiveState -p NRestarts systemd-journal-upload | xargs)"
[ "$m" = 100 ] || S journalctl -u systemd-journal-upload -o cat --no-pager | tail -5 | sed 's/^/#   /'
check "https: each of 100 events once on the collector ($m)" [ "$m" = 100 ]
local_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$HPID" >"$TMP/https.local"
remote_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$HPID" >"$TMP/https.remote"
same "https" "$TMP/https.local" "$TMP/https.remote"

# One entry in journal export format, posted with curl as journal-upload
# posts: post WHO CA MARKER; prints curl's error, if any.
post() {
	printf 'MESSAGE=%s\nTRACE_TLS_PROBE=%s\n__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=1\n_BOOT_ID=%s\n\n' \
		"$3" "$3" "$(date +%s%6N)" "$(tr -d - </proc/sys/kernel/random/boot_id)" |
		"$1" curl -sS --fail -o /dev/null --max-time 5 --cacert "$2" \
			-H 'Content-Type: application/vnd.fdo.journal' --data-binary @- "https://$CADDR:19532/upload" 2>&1
}
# posted WHO CA MARKER: post, and wait until the collector has it
posted() { err=$(post "$@"); TIMEOUT=10 wait_has remote TRACE_TLS_PROBE="$3"; }
posted S /etc/ssl/certs/journal-ca.pem trusted$$
check "https: an entry posted by the sender, trusting the CA, arrives (${err:-no error})" has remote TRACE_TLS_PROBE=trusted$$
err=$(post S /root/rogue.pem rogue$$)
note "https: trusting another CA: ${err%%$'\n'*}"
sleep 1
refused() { [ -n "$err" ] && ! has remote TRACE_TLS_PROBE="$1"; }
check "https: trusting another CA, the sender refuses the collector" refused rogue$$
# IPAddressAllow= on the socket: the sender gets through, the collector's
# own address (any other host) does not; without it, it does.
put C "$TMP/ca.pem" 0644 root /root/ca.pem
posted C /root/ca.pem open$$
check "https: without IPAddressAllow=, any address may post (${err:-no error})" has remote TRACE_TLS_PROBE=open$$
C mkdir -p /etc/systemd/system/systemd-journal-remote.socket.d
C sh -c "printf '[Socket]\nIPAddressAllow=$SADDR\nIPAddressDeny=any\n' >/etc/systemd/system/systemd-journal-remote.socket.d/50-allow.conf"
C systemctl daemon-reload
C systemctl stop systemd-journal-remote.socket systemd-journal-remote.service
C systemctl start systemd-journal-remote.socket
posted S /etc/ssl/certs/journal-ca.pem allowed$$
check "IPAddressAllow=: the sender's post arrives (${err:-no error})" has remote TRACE_TLS_PROBE=allowed$$
err=$(post C /root/ca.pem denied$$)
note "IPAddressAllow=: from another address: ${err:-accepted}"
sleep 1
check "IPAddressAllow=: a post from another address does not" refused denied$$
