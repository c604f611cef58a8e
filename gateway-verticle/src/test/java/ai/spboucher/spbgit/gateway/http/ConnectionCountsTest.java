package ai.spboucher.spbgit.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.spboucher.spbgit.gateway.http.ConnectionCounts.Admission;
import org.junit.jupiter.api.Test;

class ConnectionCountsTest {

  @Test
  void oneAddressCannotTakeTheSlotsOfOthers() {
    ConnectionCounts counts = new ConnectionCounts(5, 2);
    assertEquals(Admission.ADMITTED, counts.admit("10.0.0.1"));
    assertEquals(Admission.ADMITTED, counts.admit("10.0.0.1"));
    assertEquals(Admission.OVER_ADDRESS, counts.admit("10.0.0.1"));
    assertEquals(Admission.ADMITTED, counts.admit("10.0.0.2"));
    assertEquals(3, counts.total());
  }

  @Test
  void theTotalCapHoldsAcrossAddressesAndClosedConnectionsGiveTheirSlotBack() {
    ConnectionCounts counts = new ConnectionCounts(2, 2);
    counts.admit("10.0.0.1");
    counts.admit("10.0.0.2");
    assertEquals(Admission.OVER_TOTAL, counts.admit("10.0.0.3"));
    counts.release("10.0.0.1");
    assertEquals(0, counts.from("10.0.0.1"));
    assertEquals(Admission.ADMITTED, counts.admit("10.0.0.3"));
    assertThrows(IllegalStateException.class, () -> counts.release("10.0.0.9"));
  }
}
