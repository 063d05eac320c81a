package cli

// browseExamples returns the examples of the commands that read snapshots
// without restoring them (find, dump, stats, mount), and of the web
// dashboard (ui).
func browseExamples(name string) []string {
	switch name {
	case "find":
		return []string{"cloudstic find '*.pdf'", "cloudstic find -i 'report*' -snapshot latest",
			"cloudstic find -path-prefix /home/me/photos -newer 2024-06-01 -size +10M",
			"cloudstic find '/etc/*.conf' -older 30d -json"}
	case "dump":
		return []string{"cloudstic dump latest /Documents/report.pdf > report.pdf",
			"cloudstic dump 1a2b3c /home/me/photos -archive zip > photos.zip",
			"cloudstic dump latest / | tar -x -C /tmp/restored"}
	case "stats":
		return []string{"cloudstic stats", "cloudstic stats latest -mode raw-data", "cloudstic stats -mode files-by-contents -json",
			"cloudstic stats -growth"}
	case "copy":
		return []string{"cloudstic copy -from-store /mnt/usb/backup -from-password-file ~/.usb-pw -store s3:offsite/backup",
			"cloudstic copy -from-profile laptop -profile offsite latest    # the stores of two profiles",
			"cloudstic copy -from-store sftp://nas/backup -from-store-sftp-key ~/.ssh/id_ed25519 -tag monthly -dry-run"}
	case "rewrite":
		return []string{"cloudstic rewrite -exclude .env -exclude /.aws/ -dry-run    # every snapshot: what would go",
			"cloudstic rewrite -exclude .env -exclude /.aws/ && cloudstic prune -max-unused 0",
			"cloudstic rewrite -exclude-file leaked.txt 1a2b3c4d latest"}
	case "mount":
		return []string{"cloudstic mount /mnt/backup    # an existing directory; Ctrl-C (or fusermount -u /mnt/backup) unmounts",
			"ls /mnt/backup/snapshots/latest/    # in another shell; also hosts/HOST/, tags/TAG/, ids/ID",
			"cloudstic mount -store s3:my-bucket/backups -cache-size 256M ~/backup"}
	case "ui":
		return []string{"cloudstic ui    # open the address it prints (it carries the access token)",
			"cloudstic ui -profile docs -restore-root ~/restored",
			"cloudstic ui -all-profiles -read-only",
			"cloudstic ui -listen 0.0.0.0:8443 -tls-cert cert.pem -tls-key key.pem -auth-user me -auth-password-file ~/.config/cloudstic/ui-password"}
	case "tui":
		return []string{"cloudstic tui    # on a terminal, e.g. over SSH: b backs up, c checks, q quits",
			"cloudstic tui -profiles-file /etc/cloudstic/profiles.yaml",
			"NO_COLOR=1 cloudstic tui"}
	}
	return nil
}
