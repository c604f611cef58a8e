package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged gateway as an operator runs it: the fat jar, its environment, its sub-commands, a
 * restart.
 */
class GatewayJarIT {

  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");

  @TempDir Path tmp;
  private final List<Process> processes = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stopAll() {
    processes.forEach(Process::destroyForcibly);
  }

  @Test
  void servesMintsTokensAndKeepsStateAcrossRestarts() throws Exception {
    Path data = tmp.resolve("data");
    Running gateway = start(data);
    Path tokenFile = data.resolve("initial-owner-token");
    assertEquals(
        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile)));
    String owner = Files.readString(tokenFile).strip();
    assertFalse(gateway.log().contains(owner), "the token is never logged");
    assertTrue(gateway.log().contains(tokenFile.toAbsolutePath().toString()), "its path is");

    assertEquals(201, post(gateway, "/api/v1/repos", owner, "{\"name\":\"demo\"}").statusCode());
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = git.workTree(tmp, "work");
    String url = "http://127.0.0.1:" + gateway.port() + "/demo.git";
    String withOwner = url.replace("http://", "http://owner:" + owner + "@");
    git.ok(work, "push", "-q", withOwner, "main");

    CommandResult minted =
        command(data, "mint-job-token", "--repo", "demo", "--job", "cli-job", "--ttl", "300");
    assertEquals(0, minted.exit(), minted.output());
    String jwt = minted.output().strip();
    assertTrue(
        jwt.matches("[\\w-]+\\.[\\w-]+\\.[\\w-]+"), "prints only the JWT: " + minted.output());
    String withJob = url.replace("http://", "http://agent:" + jwt + "@");
    git.ok(work, "push", "-q", withJob, "main:refs/agents/cli-job/proposal");
    assertFalse(git.run(work, "push", withJob, "main:refs/heads/hijack").ok());

    String jti = ForgedTokens.claimsOf(jwt).getString("jti");
    assertEquals(
        204, request(gateway, "DELETE", "/api/v1/job-tokens/" + jti, owner, null).statusCode());

    gateway.process().destroy();
    assertTrue(gateway.process().waitFor(20, TimeUnit.SECONDS));
    Running restarted = start(data);
    withJob = withJob.replace(":" + gateway.port() + "/", ":" + restarted.port() + "/");
    withOwner = withOwner.replace(":" + gateway.port() + "/", ":" + restarted.port() + "/");
    assertEquals(owner, Files.readString(tokenFile).strip(), "the owner token is created once");
    assertFalse(
        git.run(work, "push", withJob, "main:refs/agents/cli-job/after-restart").ok(),
        "revocation survives a restart");
    git.ok(work, "push", "-q", withOwner, "main:refs/heads/after-restart");
    assertTrue(git.refs(data.resolve("repos/demo.git")).contains("refs/agents/cli-job/proposal"));
  }

  @Test
  void badCommandLinesExitNonZeroWithOneLine() throws Exception {
    Path data = tmp.resolve("data");
    for (String[] args :
        new String[][] {
          {"mint-job-token", "--repo", "demo", "--job", "j", "--ttl", "7201"},
          {"mint-job-token", "--repo", "../x", "--job", "j"},
          {"mint-job-token", "--repo", "demo", "--job", "Bad Job"},
          {"mint-job-token", "--repo", "demo"},
          {"frobnicate"}
        }) {
      CommandResult r = command(data, args);
      assertEquals(2, r.exit(), String.join(" ", args) + ": " + r.output());
      assertTrue(r.output().startsWith("spb-gateway: "), r.output());
    }
  }

  @Test
  void refusesAnInvalidConfiguration() throws Exception {
    ProcessBuilder pb = new ProcessBuilder(java(), "-jar", jar()).redirectErrorStream(true);
    pb.environment().put("SPB_DATA_DIR", tmp.resolve("data").toString());
    pb.environment().put("SPB_HTTP_PORT", "99999");
    Process p = pb.start();
    processes.add(p);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(2, p.exitValue(), out);
    assertTrue(out.contains("SPB_HTTP_PORT"), out);
  }

  @Test
  void refusesAtStartUpANatsFileItCannotRead() throws Exception {
    ProcessBuilder pb = new ProcessBuilder(java(), "-jar", jar()).redirectErrorStream(true);
    pb.environment().put("SPB_DATA_DIR", tmp.resolve("data").toString());
    pb.environment().put("SPB_HTTP_PORT", "0");
    pb.environment().put("SPB_NATS_USER", "gateway");
    pb.environment().put("SPB_NATS_PASSWORD_FILE", tmp.resolve("no-such.pw").toString());
    Path log = tmp.resolve("refused.log");
    Process p = pb.redirectOutput(log.toFile()).start();
    processes.add(p);
    boolean exited = p.waitFor(30, TimeUnit.SECONDS);
    String out = Files.readString(log);
    assertTrue(exited, "still running: " + out);
    assertEquals(2, p.exitValue(), "not serving without its job queue: " + out);
    assertTrue(out.startsWith("spb-gateway: SPB_NATS_PASSWORD_FILE"), out);
  }

  private record Running(Process process, int port, StringBuffer output) {
    String log() {
      return output.toString();
    }
  }

  private record CommandResult(int exit, String output) {}

  private Running start(Path data) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(java(), "-jar", jar()).redirectErrorStream(true);
    pb.environment().put("SPB_DATA_DIR", data.toString());
    pb.environment().put("SPB_HTTP_PORT", "0");
    Process p = pb.start();
    processes.add(p);
    StringBuffer output = new StringBuffer();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  output.append(line).append('\n');
                  Matcher m = LISTENING.matcher(line);
                  if (m.find()) {
                    port.complete(Integer.parseInt(m.group(1)));
                  }
                }
                port.completeExceptionally(new IOException("gateway exited:\n" + output));
              } catch (IOException e) {
                port.completeExceptionally(e);
              }
            });
    reader.setDaemon(true);
    reader.start();
    return new Running(p, port.get(60, TimeUnit.SECONDS), output);
  }

  private CommandResult command(Path data, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(java(), "-jar", jar()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("SPB_DATA_DIR", data.toString());
    pb.redirectError(ProcessBuilder.Redirect.PIPE);
    Process p = pb.start();
    processes.add(p);
    CompletableFuture<byte[]> err =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return p.getErrorStream().readAllBytes();
              } catch (IOException e) {
                return new byte[0];
              }
            });
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    String stderr = new String(err.get(), StandardCharsets.UTF_8);
    return new CommandResult(p.exitValue(), p.exitValue() == 0 ? out : stderr + out);
  }

  private HttpResponse<String> post(Running gateway, String path, String token, String body)
      throws Exception {
    return request(gateway, "POST", path, token, body);
  }

  private HttpResponse<String> request(
      Running gateway, String method, String path, String token, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
            .header("Authorization", "Bearer " + token)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String jar() {
    return System.getProperty("spb.gateway.jar", "target/spb-gateway.jar");
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
