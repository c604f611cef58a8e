package ai.spboucher.spbgit.system.page;

import ai.spboucher.spbgit.testsupport.Prerequisites;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The system's headless Chromium driven through the system's chromedriver, both named explicitly so
 * Selenium Manager never downloads anything. Each browser gets a fresh profile directory. Tests
 * fail, not skip, when {@code CI=true} and Chromium or chromedriver is missing.
 */
final class Browser implements AutoCloseable {

  static final Path CHROMIUM =
      Path.of(System.getenv().getOrDefault("SPB_CHROMIUM", "/usr/bin/chromium"));
  static final Path CHROMEDRIVER =
      Path.of(System.getenv().getOrDefault("SPB_CHROMEDRIVER", "/usr/bin/chromedriver"));

  /** Where screenshots go; failsafe runs in the module directory. */
  static final Path SCREENSHOTS = Path.of("target", "screenshots");

  final ChromeDriver driver;
  private final String baseUrl;

  private Browser(ChromeDriver driver, String baseUrl) {
    this.driver = driver;
    this.baseUrl = baseUrl;
  }

  /** Fails in CI, skips elsewhere, when the browser or its driver is not installed. */
  static void requireChromium() {
    for (Path binary : List.of(CHROMIUM, CHROMEDRIVER)) {
      if (!Files.isExecutable(binary)) {
        String why = binary + " is missing (apt-get install -y chromium chromium-driver)";
        Prerequisites.unmet("Chromium: " + why);
      }
    }
  }

  static Browser start(Path profileDir, String baseUrl) throws IOException {
    requireChromium();
    System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1280,1400",
        "--user-data-dir=" + Files.createDirectories(profileDir).toAbsolutePath());
    options.setCapability("goog:loggingPrefs", java.util.Map.of("browser", "ALL"));
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogFile(
                profileDir.resolveSibling(profileDir.getFileName() + "-chromedriver.log").toFile())
            .build();
    ChromeDriver driver = new ChromeDriver(service, options);
    driver
        .manage()
        .timeouts()
        .scriptTimeout(Duration.ofSeconds(30))
        .pageLoadTimeout(Duration.ofSeconds(30));
    return new Browser(driver, baseUrl);
  }

  /** Opens {@code path} on the gateway. */
  void open(String path) {
    driver.get(baseUrl + path);
  }

  /** Signs in through the real login form, which sends the browser on to {@code next}. */
  void signIn(String token, String next) {
    open(
        "/login?next=" + java.net.URLEncoder.encode(next, java.nio.charset.StandardCharsets.UTF_8));
    WebElement field = waitFor(d -> d.findElement(By.id("token")));
    field.sendKeys(token);
    driver.findElement(By.id("sign-in")).click();
    waitFor(d -> d.getCurrentUrl().startsWith(baseUrl + next) ? true : null);
  }

  Object js(String script, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(script, args);
  }

  /**
   * The visible text of the element with {@code id}, found and read in one script: the page
   * re-renders parts of itself on every refresh, so an element found first and read after could be
   * gone.
   */
  String text(String id) {
    return (String) js("return document.getElementById(arguments[0]).innerText", id);
  }

  /**
   * The attribute {@code name} of the element with {@code id} as written, found and read in one
   * script.
   */
  String attribute(String id, String name) {
    return (String)
        js("return document.getElementById(arguments[0]).getAttribute(arguments[1])", id, name);
  }

  WebElement byId(String id) {
    return driver.findElement(By.id(id));
  }

  List<WebElement> all(String css) {
    return driver.findElements(By.cssSelector(css));
  }

  /**
   * Waits up to 60 s for {@code condition} to return something other than null or false. A
   * condition that read an element the page has since re-rendered (stale) is asked again.
   */
  <T> T waitFor(Function<WebDriver, T> condition) {
    return waitFor(Duration.ofSeconds(60), condition);
  }

  <T> T waitFor(Duration timeout, Function<WebDriver, T> condition) {
    try {
      return new WebDriverWait(driver, timeout, Duration.ofMillis(100))
          .ignoring(StaleElementReferenceException.class)
          .until(condition);
    } catch (org.openqa.selenium.TimeoutException e) {
      String text = driver.findElement(By.tagName("body")).getText();
      throw new AssertionError(
          "timed out after "
              + timeout
              + " on "
              + driver.getCurrentUrl()
              + ", page text:\n"
              + text.substring(0, Math.min(2000, text.length())),
          e);
    }
  }

  /**
   * Saves a PNG of the viewport (or the whole page when {@code fullPage}) under target/screenshots.
   */
  Path screenshot(String name) throws IOException {
    File png = driver.getScreenshotAs(OutputType.FILE);
    Path target = Files.createDirectories(SCREENSHOTS).resolve(name + ".png");
    Files.copy(png.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
    return target;
  }

  /** Resizes the window to the page's full height first, so the screenshot shows the whole page. */
  Path fullPageScreenshot(String name, int maxHeight) throws IOException {
    var size = driver.manage().window().getSize();
    long height = ((Number) js("return document.documentElement.scrollHeight")).longValue();
    driver
        .manage()
        .window()
        .setSize(
            new org.openqa.selenium.Dimension(
                size.getWidth(), (int) Math.min(maxHeight, height + 140)));
    try {
      return screenshot(name);
    } finally {
      driver.manage().window().setSize(size);
    }
  }

  /**
   * Console messages since the last call that show the page misbehaving: uncaught errors and
   * anything the Content-Security-Policy refused (a refused inline style or script is a bug in the
   * page, or an injection).
   */
  List<String> pageProblems() {
    return driver.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
        .map(org.openqa.selenium.logging.LogEntry::getMessage)
        .filter(m -> m.contains("Content Security Policy") || m.contains("Uncaught"))
        .toList();
  }

  @Override
  public void close() {
    driver.quit();
  }
}
