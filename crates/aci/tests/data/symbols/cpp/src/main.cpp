#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "shapes.hpp"

static const char* kUsage = "usage: shapes KEY=VALUE...";

struct Config {
    std::map<std::string, std::string> values;

    std::string get(const std::string& key, const std::string& fallback) const
    {
        auto it = values.find(key);
        return it == values.end() ? fallback : it->second;
    }
};

// parse splits "key=value"; parse_config applies it to every argument.
static std::pair<std::string, std::string> parse(const std::string& arg)
{
    auto eq = arg.find('=');
    if (eq == std::string::npos) {
        return {arg, ""};
    }
    return {arg.substr(0, eq), arg.substr(eq + 1)};
}

static Config parse_config(int argc,
                           char** argv)
{
    Config config;
    for (int i = 1; i < argc; ++i) {
        auto kv = parse(argv[i]);
        config.values[kv.first] = kv.second;
    }
    return config;
}

double total_area(const geo::Registry<geo::Shape>& shapes)
{
    double total = 0;
    if (auto* circle = shapes.find("circle")) {
        total += circle->area();
    }
    return total;
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::cerr << kUsage << "\n";
        return 2;
    }
    Config config = parse_config(argc, argv);
    geo::Unit unit = parse_unit(config.get("unit", "m"));
    double r = geo::clamp_value(std::stod(config.get("r", "1")), 0.0, 100.0);

    geo::Registry<geo::Shape> shapes;
    shapes.add(std::make_shared<geo::Circle>(geo::Point{0, 0}, r));
    std::cout << "total_area = " << total_area(shapes)
              << (unit == geo::Unit::Metre ? " m2" : " mm2") << "\n";
    return 0;
}
