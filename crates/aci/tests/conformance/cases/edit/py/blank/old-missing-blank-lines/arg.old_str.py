log = logging.getLogger(__name__)
@dataclass
class Item:
