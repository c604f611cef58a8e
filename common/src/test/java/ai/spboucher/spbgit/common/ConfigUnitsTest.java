package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConfigUnitsTest {

  @Test
  void sizesTakeBinaryUnits() {
    assertEquals(512, ConfigUnits.parseBytes("512"));
    assertEquals(64L << 10, ConfigUnits.parseBytes("64k"));
    assertEquals(100L << 20, ConfigUnits.parseBytes(" 100M "));
    assertEquals(2L << 30, ConfigUnits.parseBytes("2g"));
  }

  @Test
  void durationsTakeSecondsMinutesHoursAndDays() {
    assertEquals(Duration.ofSeconds(90), ConfigUnits.parseDuration("90"));
    assertEquals(Duration.ofSeconds(90), ConfigUnits.parseDuration("90s"));
    assertEquals(Duration.ofMinutes(30), ConfigUnits.parseDuration("30m"));
    assertEquals(Duration.ofHours(2), ConfigUnits.parseDuration("2H"));
    assertEquals(Duration.ofDays(30), ConfigUnits.parseDuration("30d"));
  }

  @Test
  void malformedValuesAreRefusedNotGuessed() {
    for (String bad : new String[] {"", "k", "-1", "-5m", "12x", "1.5g", "ten", "9999999999999g"}) {
      assertThrows(NumberFormatException.class, () -> ConfigUnits.parseBytes(bad), bad);
    }
    for (String bad : new String[] {"", "s", "-30s", "1w", "1.5h", "soon"}) {
      assertThrows(NumberFormatException.class, () -> ConfigUnits.parseDuration(bad), bad);
    }
  }
}
