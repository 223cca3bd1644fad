package replaystudy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// redactRecipe is docs/replay.md's recipe that strips passwords from a log: the shell
// block that writes "<redacted>".
func redactRecipe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/replay.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```sh\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if strings.Contains(body, "<redacted>") {
			return body
		}
	}
	t.Fatal("docs/replay.md has no ```sh block that redacts")
	return ""
}

// TestRedactRecipe runs the documented recipe on a general log with every form of
// password MariaDB and MySQL log, and a PostgreSQL one: no password is left, the rest of
// each statement and every other statement are as they were, and the log reads as before.
func TestRedactRecipe(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed")
	}
	secrets := []string{
		"CREATE USER 'app'@'%' IDENTIFIED BY 'S3cret-1'",
		"ALTER USER app@localhost IDENTIFIED VIA ed25519 USING PASSWORD('S3cret-2')",
		"SET PASSWORD FOR 'app'@'%' = PASSWORD('S3cret-3')",
		`set password = "S3cret-4"`,
		"GRANT ALL ON app.* TO 'app'@'%' identified with mysql_native_password by 'S3cret-5'",
		"CREATE ROLE app LOGIN PASSWORD 'S3cret-6'",
	}
	log := generalHead + "261208  0:11:56\t    30 Connect\troot@localhost on app using Socket\n"
	for _, s := range secrets {
		log += "\t\t    30 Query\t" + s + "\n"
	}
	log += "\t\t    30 Query\tselect c from t where name='keep me' and pw_hint=\"also kept\"\n\t\t    30 Quit\t\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "general.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", redactRecipe(t))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the recipe: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "general.redacted.log"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if strings.Contains(got, "S3cret") || strings.Count(got, "'<redacted>'") < len(secrets) {
		t.Errorf("a password is left:\n%s", got)
	}
	for _, keep := range []string{"IDENTIFIED BY '<redacted>'", "USING PASSWORD('<redacted>')", "'keep me'", `"also kept"`, "CREATE ROLE app LOGIN PASSWORD"} {
		if !strings.Contains(got, keep) {
			t.Errorf("the redacted log lacks %q:\n%s", keep, got)
		}
	}
	before, err := CheckLog(context.Background(), filepath.Join(dir, "general.log"), LogChecks{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := CheckLog(context.Background(), filepath.Join(dir, "general.redacted.log"), LogChecks{})
	if err != nil || after.Scan.Statements != before.Scan.Statements || after.Scan.Statements != int64(len(secrets)+1) {
		t.Errorf("the redacted log reads %v, %+v; want %d statements as before", err, after, before.Scan.Statements)
	}
}
