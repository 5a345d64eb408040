log = logging.getLogger("warehouse.inventory")


@dataclass
class Item:
