package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.LogStream;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LogPumpTest {

  private record Chunk(LogStream stream, String text) {}

  private final List<Chunk> chunks = new ArrayList<>();

  private LogPump pump(long cap) {
    return new LogPump(
        (stream, data) -> {
          synchronized (chunks) {
            chunks.add(new Chunk(stream, new String(data, StandardCharsets.UTF_8)));
          }
        },
        "test",
        cap);
  }

  private static Frame stdout(String text) {
    return new Frame(StreamType.STDOUT, text.getBytes(StandardCharsets.UTF_8));
  }

  private String text(LogStream stream) {
    StringBuilder all = new StringBuilder();
    chunks.stream().filter(c -> c.stream() == stream).forEach(c -> all.append(c.text()));
    return all.toString();
  }

  @Test
  void steadyOutputIsSentEveryFewMillisecondsNotHeldUntilTheChunkIsFull() throws Exception {
    LogPump pump = pump(1 << 20);
    for (int i = 0; i < 50; i++) {
      pump.offer(stdout("line-" + i + "\n"));
      Thread.sleep(10);
    }
    assertTrue(pump.close(10_000));
    // 500 ms of output with a new line every 10 ms: a chunk goes out 20 ms after its first byte.
    assertTrue(chunks.size() >= 5, chunks.size() + " chunks");
    StringBuilder expected = new StringBuilder();
    for (int i = 0; i < 50; i++) {
      expected.append("line-").append(i).append('\n');
    }
    assertEquals(expected.toString(), text(LogStream.STDOUT));
  }

  @Test
  void overLongLinesAreSplitAndEveryByteIsKept() throws Exception {
    LogPump pump = pump(1 << 20);
    String line = "x".repeat(40_000);
    pump.offer(stdout(line.substring(0, 10_000)));
    pump.offer(stdout(line.substring(10_000) + "\nafter\n"));
    assertTrue(pump.close(10_000));
    List<String> lines = text(LogStream.STDOUT).lines().toList();
    assertEquals(
        List.of(LogPump.MAX_LINE, LogPump.MAX_LINE, 40_000 - 2 * LogPump.MAX_LINE, 5),
        lines.stream().map(String::length).toList());
    assertEquals("after", lines.get(3));
  }

  @Test
  void aNewlineRightAtTheLimitEndsTheLineWithoutASplit() throws Exception {
    LogPump pump = pump(1 << 20);
    pump.offer(stdout("y".repeat(LogPump.MAX_LINE)));
    pump.offer(stdout("\nz\n"));
    assertTrue(pump.close(10_000));
    assertEquals("y".repeat(LogPump.MAX_LINE) + "\nz\n", text(LogStream.STDOUT));
  }

  @Test
  void outputPastTheCapIsCountedNotKeptAndTheLogSaysSo() throws Exception {
    LogPump pump = pump(1000);
    for (int i = 0; i < 50; i++) {
      pump.offer(stdout("0123456789".repeat(9) + "\n"));
    }
    assertTrue(pump.close(10_000));
    assertEquals(1000, text(LogStream.STDOUT).length());
    String runner = text(LogStream.RUNNER);
    assertTrue(runner.contains("[spb-runner] log cap of 1000 bytes reached"), runner);
    assertTrue(
        runner.contains("[spb-runner] log cap reached: 3550 more bytes of output were not kept"),
        runner);
  }

  @Test
  void aChunkNeverMixesStreams() throws Exception {
    LogPump pump = pump(1 << 20);
    pump.offer(stdout("out-1\n"));
    pump.offer(new Frame(StreamType.STDERR, "err-1\n".getBytes(StandardCharsets.UTF_8)));
    pump.offer(stdout("out-2\n"));
    pump.runnerLine("done");
    assertTrue(pump.close(10_000));
    assertEquals(
        List.of(
            new Chunk(LogStream.STDOUT, "out-1\n"),
            new Chunk(LogStream.STDERR, "err-1\n"),
            new Chunk(LogStream.STDOUT, "out-2\n"),
            new Chunk(LogStream.RUNNER, "[spb-runner] done\n")),
        chunks);
  }
}
